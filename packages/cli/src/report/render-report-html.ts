import { classWord, escapeHtml } from './escape-html.ts'
import { foldAuditHtml } from './fold-audit-events.ts'
import type { SessionReport } from './report-model.ts'
import { reportChartSvg } from './report-chart-svg.ts'
import { costText, integer, percent, prefilledTokens, priceText, purposesText } from './report-format.ts'

/**
 * The report as one self-contained HTML page: inline CSS and SVG, no script, and a content
 * security policy that forbids every fetch, so it renders the same from `file://`, offline, and
 * cannot reach the network even if a string from the log were to slip through unescaped (none
 * does: every one goes through `escapeHtml`). The page has no timestamp: the same log gives the
 * same bytes.
 */
export function renderReportHtml(report: SessionReport): string {
  const { totals } = report
  const breaks = report.requests.filter((request) => request.break)
  const rows: Array<[string, string]> = [
    [
      'requests',
      `${integer(totals.requests)}${totals.requests ? `: ${purposesText(totals)}` : ''}${totals.withoutUsage ? ` (${integer(totals.withoutUsage)} without usage)` : ''}`,
    ],
    ['prompt tokens', integer(totals.prompt)],
    ['cached', `${integer(totals.cached)} (${percent(totals.hitRatio)})`],
    ['prefilled', `${integer(totals.written + totals.uncached)}: written + uncached`],
    ['written', integer(totals.written)],
    ['uncached', integer(totals.uncached)],
    ['output tokens', integer(totals.output)],
    ['cost', costText(totals)],
    ['rewrites', `${integer(totals.folds)} fold(s), ${integer(totals.prunes)} pruned tool result(s)`],
    ['breaks', integer(totals.breaks)],
  ]
  if (report.guards.length) rows.push(['summary guard', `${report.guards.length} finding(s)`])
  const body = [
    `<header><h1>warmfold report <span class="session">${escapeHtml(report.sessionId)}</span></h1>`,
    `<p class="file">${escapeHtml(report.file)}</p>`,
    ...(report.forkOf
      ? [
          `<p class="fork-of">A fork of session ${escapeHtml(report.forkOf.parentSessionId)}: its first request replayed the parent's log up to line ${report.forkOf.parentLine}.</p>`,
        ]
      : []),
    `<p class="source source-${report.source}">${report.source === 'ledger' ? 'Numbers from the cache ledger (cache/observation events).' : 'No cache ledger in this log: numbers from the provider usage on assistant/message and compaction/summary events (see the notes).'}</p></header>`,
    '<section id="totals"><h2>Totals</h2><table class="totals">',
    ...rows.map(([name, value]) => `<tr><th scope="row">${name}</th><td>${escapeHtml(value)}</td></tr>`),
    `</table><p class="price">${escapeHtml(priceText(report))}</p></section>`,
    `<section id="requests"><h2>Requests (${integer(totals.requests)})</h2>`,
    '<ul class="legend"><li><i class="swatch cached"></i>cached (read from the cache)</li><li><i class="swatch written"></i>written to the cache (prefilled)</li><li><i class="swatch uncached"></i>uncached (prefilled, not written)</li><li><i class="swatch none"></i>no usage in the log</li><li><i class="swatch break"></i>break</li><li><i class="swatch purpose"></i>not a conversation request (summary call)</li><li><i class="swatch fold"></i>fold</li><li><i class="swatch prune"></i>prune</li></ul>',
    `<div class="chart-scroll">${reportChartSvg(report)}</div>`,
    '<p class="hint">Hover a bar for its numbers and how its prompt diverged; hover a line for the rewrite.</p></section>',
    `<section id="breaks"><h2>Breaks (${integer(breaks.length)})</h2>`,
    breaks.length
      ? [
          '<table class="breaks"><thead><tr><th>request</th><th>line</th><th>purpose</th><th>cause</th><th>prefilled</th><th>explanation</th></tr></thead><tbody>',
          ...breaks.map((request) => {
            const prefilled = prefilledTokens(request)
            const cause = request.break!.cause
            return `<tr id="break-${request.number}"><td><a href="#request-${request.number}">#${request.number}</a></td><td>${request.line}</td><td>${escapeHtml(request.purpose)}</td><td><span class="cause cause-${classWord(cause)}">${escapeHtml(cause)}</span></td><td class="number">${prefilled === null ? 'no usage' : integer(prefilled)}</td><td>${escapeHtml(request.break!.explanation)}</td></tr>`
          }),
          '</tbody></table>',
        ].join('\n')
      : '<p>No breaks: every request read what it could from the cache.</p>',
    '</section>',
  ]
  if (report.guards.length) {
    body.push(
      `<section id="guards"><h2>Summary guard (${report.guards.length})</h2><p>Summary calls that were not a warm replay of the conversation's last request, seen before they were sent.</p><table class="guards"><thead><tr><th>line</th><th>after request</th><th>action</th><th>route</th><th>what differs</th></tr></thead><tbody>`,
      ...report.guards.map(
        (guard) =>
          `<tr><td>${guard.line}</td><td>#${guard.afterRequest}</td><td>${escapeHtml(guard.action)}</td><td>${escapeHtml(guard.route)}</td><td>${escapeHtml(guard.text)}</td></tr>`,
      ),
      '</tbody></table></section>',
    )
  }
  if (report.pruneDecisions.length) {
    body.push(
      `<section id="prune-decisions"><h2>Prune decisions (${report.pruneDecisions.length})</h2><p>Prune passes that alone would have relieved the pressure: each lands only when what it saves on the following requests pays for the re-prefill it causes, otherwise the engine folds instead.</p><table class="guards"><thead><tr><th>line</th><th>after request</th><th>action</th><th>why</th></tr></thead><tbody>`,
      ...report.pruneDecisions.map(
        (decision) =>
          `<tr><td>${decision.line}</td><td>#${decision.afterRequest}</td><td>${escapeHtml(decision.action)}</td><td>${escapeHtml(decision.text)}</td></tr>`,
      ),
      '</tbody></table></section>',
    )
  }
  if (report.foldTimings.length) {
    body.push(
      `<section id="fold-timing"><h2>Fold timing (${report.foldTimings.length})</h2><p>How long each fold's summary took and how long the conversation waited for it (seconds on the engine's clock): a synchronous fold blocks the turn for its whole summary call, a background fold only for what is left when the request reaches the pressure threshold.</p><table class="guards"><thead><tr><th>line</th><th>after request</th><th>mode</th><th>summary in hand</th><th>waited</th><th>hidden</th><th>at threshold</th><th>after the swap</th></tr></thead><tbody>`,
      ...report.foldTimings.map(
        (fold) =>
          `<tr><td>${fold.line}</td><td>#${fold.afterRequest}</td><td>${fold.mode}</td><td>${seconds(fold.readyAfterMs)}</td><td>${seconds(fold.waitedMs)}</td><td>${seconds(fold.stallSavedMs)}</td><td>${fold.statusAtThreshold}</td><td>${fold.discarded ? `discarded (${escapeHtml(fold.discarded.reason)}): ${escapeHtml(fold.discarded.detail)}` : `about ${fold.postSwapPrefillTokens.toLocaleString('en-US')} new tokens prefilled`}</td></tr>`,
      ),
      '</tbody></table></section>',
    )
  }
  if (report.foldAudits.length) body.push(...foldAuditHtml(report.foldAudits))
  if (report.forks.length) {
    body.push(
      `<section id="forks"><h2>Forks (${report.forks.length})</h2><p>Child sessions this session forked: each one's first request was this session's last request plus its task, so it read this session's cache. Report a child by its session id.</p><table class="guards"><thead><tr><th>line</th><th>after request</th><th>child session</th><th>outcome</th><th>answer or reason</th></tr></thead><tbody>`,
      ...report.forks.map(
        (fork) =>
          `<tr><td>${fork.line}</td><td>#${fork.afterRequest}</td><td>${escapeHtml(fork.childSessionId)}</td><td>${fork.outcome}</td><td>${escapeHtml(fork.text)}</td></tr>`,
      ),
      '</tbody></table></section>',
    )
  }
  body.push(
    '<section id="notes"><h2>Notes</h2><ul>',
    ...report.notes.map((note) => `<li>${escapeHtml(note)}</li>`),
    '</ul></section>',
  )
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>warmfold report: ${escapeHtml(report.sessionId)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    ...body,
    '</body></html>',
    '',
  ].join('\n')
}

const STYLE = `
:root { --cached: #2f9e5f; --written: #e3a21a; --uncached: #d8453b; --fold: #3157d5; --prune: #8b4fd0; --ink: #1d2330; --muted: #5f6878; }
* { box-sizing: border-box; }
body { margin: 24px 32px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h1 .session { font-weight: 400; color: var(--muted); }
h2 { font-size: 16px; margin: 28px 0 8px; }
.file, .price, .hint { color: var(--muted); margin: 2px 0; }
.source { margin: 6px 0; padding: 6px 10px; border-left: 4px solid var(--cached); background: #f3f8f4; }
.source-usage { border-left-color: var(--written); background: #fdf7ea; }
table { border-collapse: collapse; }
.totals th { text-align: left; font-weight: 500; padding: 2px 18px 2px 0; color: var(--muted); }
.totals td { padding: 2px 0; font-variant-numeric: tabular-nums; }
.breaks, .guards { width: 100%; }
.breaks th, .breaks td, .guards th, .guards td { border-bottom: 1px solid #e4e7ec; padding: 4px 8px; text-align: left; vertical-align: top; }
.breaks td.number { text-align: right; font-variant-numeric: tabular-nums; }
.breaks tr:target { background: #fff6d6; }
.cause { display: inline-block; padding: 0 6px; border-radius: 8px; background: #eef0f4; }
.cause-fold { background: #e3e9fb; } .cause-prune { background: #efe5fa; } .cause-envelope, .cause-tools { background: #fbe4e2; } .cause-expired, .cause-provider { background: #fdf1d8; }
.legend { list-style: none; padding: 0; margin: 4px 0 8px; display: flex; flex-wrap: wrap; gap: 4px 16px; color: var(--muted); }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px; }
.swatch.cached { background: var(--cached); } .swatch.written { background: var(--written); } .swatch.uncached { background: var(--uncached); }
.swatch.none { background: repeating-linear-gradient(45deg, #b9b9b9 0 3px, #fff 3px 6px); }
.swatch.break { width: 0; height: 0; border: 6px solid transparent; border-top: 10px solid var(--ink); border-bottom: 0; }
.swatch.purpose { width: 9px; height: 9px; transform: rotate(45deg); background: var(--muted); }
.swatch.fold { width: 3px; background: var(--fold); } .swatch.prune { width: 3px; background: var(--prune); }
.chart-scroll { overflow-x: auto; border: 1px solid #e4e7ec; border-radius: 6px; padding: 6px 0; }
.chart { display: block; font: 11px system-ui, sans-serif; }
.chart.fit { width: 100%; height: auto; min-width: 640px; }
.chart .grid { stroke: #edf0f3; } .chart .axis-line { stroke: #9aa2ae; } .chart .axis { fill: var(--muted); }
.chart .seg.cached { fill: var(--cached); } .chart .seg.written { fill: var(--written); } .chart .seg.uncached { fill: var(--uncached); }
.chart .hover { fill: transparent; } .chart .request:hover .hover, .chart .request:target .hover { fill: rgba(29, 35, 48, 0.08); }
.chart .break-mark { fill: var(--ink); } .chart .purpose-mark { fill: var(--muted); }
.chart .break-mark.cause-fold { fill: var(--fold); } .chart .break-mark.cause-prune { fill: var(--prune); } .chart .break-mark.cause-envelope, .chart .break-mark.cause-tools { fill: var(--uncached); } .chart .break-mark.cause-expired, .chart .break-mark.cause-provider { fill: var(--written); }
.chart .marker line { stroke-width: 1.5; stroke-dasharray: 4 3; } .chart .marker text { font-weight: 600; }
.chart .marker.fold line { stroke: var(--fold); } .chart .marker.fold text { fill: var(--fold); }
.chart .marker.prune line { stroke: var(--prune); } .chart .marker.prune text { fill: var(--prune); }
`

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}
