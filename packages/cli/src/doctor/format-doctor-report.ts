import { describeDivergence, formatCount } from '@warmfold/cache-ledger/prefix'
import { printable } from '../shared/printable-text.ts'
import type { DoctorReport } from './doctor-report.ts'

/** Breaks printed in the terminal; `--json` and `--html` list them all. */
export const TERMINAL_BREAKS = 20
/** Requests listed one per line in the terminal; a longer log shows only the totals and the breaks. */
export const TERMINAL_REQUESTS = 100

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
    lines.push(
      ...table(
        ['line', 'api', 'uncached', 'prompt', 'vs', 'first divergence', 'changes'],
        report.breaks
          .slice(0, TERMINAL_BREAKS)
          .map((item) => [
            String(item.index),
            item.api,
            formatCount(item.uncachedChars),
            formatCount(item.promptChars),
            item.bestMatch === null ? '-' : String(item.bestMatch),
            describeDivergence(item.divergence),
            item.changes.join(', '),
          ]),
      ),
    )
    if (report.breaks.length > TERMINAL_BREAKS)
      lines.push(`… and ${report.breaks.length - TERMINAL_BREAKS} more (--json or --html lists every one)`)
  }
  lines.push('')
  if (report.requests.length > TERMINAL_REQUESTS)
    lines.push(`${report.requests.length} requests: --json or --html lists each one.`)
  else {
    lines.push('Requests:')
    lines.push(
      ...table(
        ['line', 'api', 'model', 'prompt', 'cached', 'uncached', 'vs', 'first divergence', 'changes'],
        report.requests.map((item) => [
          String(item.index),
          item.api,
          item.model ?? '-',
          formatCount(item.promptChars),
          formatCount(item.cachedChars),
          formatCount(item.uncachedChars),
          item.bestMatch === null ? '-' : String(item.bestMatch),
          describeDivergence(item.divergence),
          item.changes.join(', ') || '-',
        ]),
      ),
    )
  }
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

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] as string).length)),
  )
  const numeric = new Set(['line', 'uncached', 'prompt', 'cached', 'vs'])
  const line = (cells: string[]) =>
    `  ${cells
      .map((cell, column) =>
        numeric.has(header[column] as string)
          ? cell.padStart(widths[column] as number)
          : cell.padEnd(widths[column] as number),
      )
      .join('  ')
      .trimEnd()}`
  return [line(header), ...rows.map(line)]
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '0%' : `${((part / whole) * 100).toFixed(1)}%`
}
