import { describeDivergence, formatCount } from '@warmfold/cache-ledger/prefix'
import { printable } from '../shared/printable-text.ts'
import { textColumns } from '../shared/text-columns.ts'
import type { DoctorBreak, DoctorReport, DoctorRequest } from './doctor-report.ts'

/** Breaks printed in the terminal; `--json` and `--html` list them all. */
export const TERMINAL_BREAKS = 20
/** Requests listed one per line in the terminal; a longer log shows only the totals and the breaks. */
export const TERMINAL_REQUESTS = 100

/** The columns of a break's row, in the terminal and on the page. */
export const BREAK_COLUMNS = ['line', 'api', 'uncached', 'prompt', 'vs', 'first divergence', 'changes']

/** The columns of a request's row, in the terminal and on the page (which adds a bar after `uncached`). */
export const REQUEST_COLUMNS = [
  'line',
  'api',
  'model',
  'prompt',
  'cached',
  'uncached',
  'vs',
  'first divergence',
  'changes',
]

/** A request's or a break's (which has no model or cached chars) cells under `columns`. */
export function rowCells(item: DoctorBreak & Partial<DoctorRequest>, columns: readonly string[]): string[] {
  const cells: Readonly<Record<string, string>> = {
    line: String(item.index),
    api: item.api,
    model: item.model ?? '-',
    prompt: formatCount(item.promptChars),
    cached: item.cachedChars === undefined ? '-' : formatCount(item.cachedChars),
    uncached: formatCount(item.uncachedChars),
    vs: item.bestMatch === null ? '-' : String(item.bestMatch),
    'first divergence': describeDivergence(item.divergence),
    changes: item.changes.join(', ') || '-',
  }
  return columns.map((column) => cells[column] as string)
}

/** The columns of numbers, aligned right. */
export const NUMERIC_COLUMNS: ReadonlySet<string> = new Set(['line', 'uncached', 'prompt', 'cached', 'vs'])

/**
 * The terminal report: totals, the worst breaks, then (for a short log) one line per request.
 * Control characters in anything taken from the log (models, reasons, the file name) are printed
 * as `\u` escapes, so a log cannot send escape sequences to the terminal.
 */
export function formatDoctorReport(report: DoctorReport, file: string): string {
  const { totals } = report
  const apis = new Map<string, number>()
  for (const request of report.requests) apis.set(request.api, (apis.get(request.api) ?? 0) + 1)
  const byApi = [...apis].map(([api, count]) => `${api} ${count}`).join(', ') || 'none'
  const unreadable = report.unreadable.length ? `, ${plural(report.unreadable.length, 'unreadable line')}` : ''
  const lines = [
    `warmfold doctor: ${file}: ${plural(totals.requests, 'request')} (${byApi})${unreadable}`,
    `prompt ${formatCount(totals.promptChars)} chars: ${formatCount(totals.cachedChars)} shared with earlier ` +
      `requests of the same cache family, ${formatCount(totals.uncachedChars)} not ` +
      `(${percent(totals.uncachedChars, totals.promptChars)} uncached)`,
    '',
  ]
  for (const line of report.unreadable) lines.push(`unreadable line ${line.index}: ${line.reason}`)
  if (report.unreadable.length) lines.push('')
  if (report.breaks.length === 0) lines.push('No breaks: every request kept the prefix of its best match.')
  else {
    lines.push(`Breaks (${report.breaks.length}), most uncached first:`)
    lines.push(...table(BREAK_COLUMNS, report.breaks.slice(0, TERMINAL_BREAKS)))
    if (report.breaks.length > TERMINAL_BREAKS)
      lines.push(`… and ${report.breaks.length - TERMINAL_BREAKS} more (--json or --html lists every one)`)
  }
  lines.push('')
  if (report.requests.length > TERMINAL_REQUESTS)
    lines.push(`${report.requests.length} requests: --json or --html lists each one.`)
  else lines.push('Requests:', ...table(REQUEST_COLUMNS, report.requests))
  lines.push(
    '',
    'Chars are of the canonical prompt (tools, system, messages); ' +
      '"vs" is the earlier line each request is compared with.',
  )
  return `${lines.map(printable).join('\n')}\n`
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}

/** `items` in a table under `columns`, indented, the numbers aligned right. */
function table(columns: readonly string[], items: ReadonlyArray<DoctorBreak & Partial<DoctorRequest>>): string[] {
  const rows = [columns, ...items.map((item) => rowCells(item, columns))]
  const { line } = textColumns(rows, (column) => NUMERIC_COLUMNS.has(columns[column] as string))
  return rows.map((cells) => `  ${line(cells)}`.trimEnd())
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '0%' : `${((part / whole) * 100).toFixed(1)}%`
}
