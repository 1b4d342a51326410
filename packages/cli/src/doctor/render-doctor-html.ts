import { describeDivergence, formatCount } from '@warmfold/cache-ledger/prefix'
import type { DoctorReport } from './doctor-report.ts'

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

const BREAK_HEADER =
  '<tr><th>line</th><th>api</th><th>uncached</th><th>prompt</th><th>vs</th>' +
  '<th>first divergence</th><th>changes</th></tr>'
const REQUEST_HEADER =
  '<tr><th>line</th><th>api</th><th>model</th><th>prompt</th><th>cached</th><th>uncached</th>' +
  '<th>cached / uncached</th><th>vs</th><th>first divergence</th><th>changes</th></tr>'
const LEGEND =
  '<p><span class="key cached"></span>shared with an earlier request of the same cache family ' +
  '(a prefix cache can reuse it)<span class="key uncached"></span>not shared. ' +
  'Chars are of the canonical prompt (tools, system, messages); ' +
  '"vs" is the earlier line each request is compared with; a break\'s row is tinted.</p>'

function cell(text: string, numeric = false): string {
  return `<td${numeric ? ' class="n"' : ''}>${escapeHtml(text)}</td>`
}

function bestMatchCell(bestMatch: number | null): string {
  return cell(bestMatch === null ? '-' : String(bestMatch), true)
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
    return (
      `<tr${breaking.has(request.index) ? ' class="break"' : ''}>` +
      cell(String(request.index), true) +
      cell(request.api) +
      cell(request.model ?? '-') +
      cell(formatCount(request.promptChars), true) +
      cell(formatCount(request.cachedChars), true) +
      cell(formatCount(request.uncachedChars), true) +
      `<td>${bar}</td>` +
      bestMatchCell(request.bestMatch) +
      cell(describeDivergence(request.divergence)) +
      cell(request.changes.join(', ') || '-') +
      '</tr>'
    )
  })
  const breakRows = report.breaks.map(
    (item) =>
      '<tr>' +
      cell(String(item.index), true) +
      cell(item.api) +
      cell(formatCount(item.uncachedChars), true) +
      cell(formatCount(item.promptChars), true) +
      bestMatchCell(item.bestMatch) +
      cell(describeDivergence(item.divergence)) +
      cell(item.changes.join(', ')) +
      '</tr>',
  )
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
      ? `<table>${BREAK_HEADER}${breakRows.join('\n')}</table>`
      : '<p>No breaks: every request kept the prefix of its best match.</p>',
    '<h2>Requests</h2>',
    `<table>${REQUEST_HEADER}`,
    rows.join('\n'),
    '</table>',
    LEGEND,
    '</body></html>',
    '',
  ].join('\n')
}
