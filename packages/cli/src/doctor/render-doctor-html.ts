import { describeDivergence, formatCount } from '@warmfold/cache-ledger/prefix'
import type { DoctorBreak, DoctorReport, DoctorRequest } from './doctor-report.ts'
import { BREAK_COLUMNS, NUMERIC_COLUMNS, REQUEST_COLUMNS, rowCells } from './format-doctor-report.ts'

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)
}

const STYLE = [
  'body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}',
  'table{border-collapse:collapse;margin:1em 0}' +
    'th,td{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd;vertical-align:top;white-space:nowrap}',
  'td.n{text-align:right;font-variant-numeric:tabular-nums}' +
    '.bar{display:flex;height:12px;min-width:2px;background:#eee}',
  '.cached{background:#4a8}.uncached{background:#d73}' +
    '.key{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}.break{background:#fee}code{font-size:13px}',
].join('\n')

const LEGEND =
  '<p><span class="key cached"></span>shared with an earlier request of the same cache family ' +
  '(a prefix cache can reuse it)<span class="key uncached"></span>not shared. ' +
  'Chars are of the canonical prompt (tools, system, messages); ' +
  '"vs" is the earlier line each request is compared with; a break\'s row is tinted.</p>'

/** Where a request's row has its bar: after the uncached column. */
const BAR_COLUMN = REQUEST_COLUMNS.indexOf('uncached') + 1

/** A table's header row. */
function header(columns: readonly string[]): string {
  return `<tr>${columns.map((column) => `<th>${column}</th>`).join('')}</tr>`
}

/** A request's or a break's cells under `columns` (see `rowCells`), escaped, the numbers aligned right. */
function cells(item: DoctorBreak & Partial<DoctorRequest>, columns: readonly string[]): string[] {
  return rowCells(item, columns).map((text, column) => {
    const numeric = NUMERIC_COLUMNS.has(columns[column] as string)
    return `<td${numeric ? ' class="n"' : ''}>${escapeHtml(text)}</td>`
  })
}

/**
 * The report as one self-contained HTML page: no script, no network, no external file. Every
 * text from the log (models, reasons, roles, field names, the file name) is escaped.
 */
export function renderDoctorHtml(report: DoctorReport, file: string): string {
  const { totals } = report
  const widest = Math.max(1, ...report.requests.map((request) => request.promptChars))
  const breaking = new Set(report.breaks.map((item) => item.index))
  const rows = report.requests.map((request) => {
    const changes = request.changes.length ? `; changes: ${request.changes.join(', ')}` : ''
    const explanation = `line ${request.index}: ${describeDivergence(request.divergence)}${changes}`
    const width = ((request.promptChars / widest) * 300).toFixed(1)
    const bar =
      `<div class="bar" style="width:${width}px" title="${escapeHtml(explanation)}">` +
      `<div class="cached" style="flex:${request.cachedChars}"></div>` +
      `<div class="uncached" style="flex:${request.uncachedChars}"></div></div>`
    const row = cells(request, REQUEST_COLUMNS)
    row.splice(BAR_COLUMN, 0, `<td>${bar}</td>`)
    return `<tr${breaking.has(request.index) ? ' class="break"' : ''}>${row.join('')}</tr>`
  })
  const breakRows = report.breaks.map((item) => `<tr>${cells(item, BREAK_COLUMNS).join('')}</tr>`)
  const unreadable = report.unreadable.map((line) => `<li>line ${line.index}: ${escapeHtml(line.reason)}</li>`)
  const summary =
    `<p><code>${escapeHtml(file)}</code>: ${totals.requests} requests, ${totals.breaks} breaks. ` +
    `Prompt ${formatCount(totals.promptChars)} chars: ${formatCount(totals.cachedChars)} shared with earlier ` +
    `requests of the same cache family, ${formatCount(totals.uncachedChars)} not.</p>`
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">' +
      `<title>warmfold doctor: ${escapeHtml(file)}</title><style>${STYLE}</style></head>`,
    '<body>',
    '<h1>warmfold doctor</h1>',
    summary,
    unreadable.length ? `<h2>Unreadable lines (${unreadable.length})</h2><ul>${unreadable.join('')}</ul>` : '',
    `<h2>Breaks (${report.breaks.length}), most uncached first</h2>`,
    breakRows.length
      ? `<table>${header(BREAK_COLUMNS)}${breakRows.join('\n')}</table>`
      : '<p>No breaks: every request kept the prefix of its best match.</p>',
    '<h2>Requests</h2>',
    `<table>${header(REQUEST_COLUMNS.toSpliced(BAR_COLUMN, 0, 'cached / uncached'))}`,
    rows.join('\n'),
    '</table>',
    LEGEND,
    '</body></html>',
    '',
  ].join('\n')
}
