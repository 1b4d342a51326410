import { classWord, escapeHtml } from './escape-html.ts'
import { foldAuditHtml } from './fold-audit-events.ts'
import { foldRowsHtml } from './fold-rows-format.ts'
import { summaryStateText } from './fold-timing-events.ts'
import type { SessionReport } from './report-model.ts'
import { reportChartSvg } from './report-chart-svg.ts'
import { REPORT_STYLE } from './report-style.ts'
import { loggedSection, tableHead } from './html-table.ts'
import { costText, integer, percent, prefilledText, priceText, requestsText, seconds } from './report-format.ts'

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
    ['requests', requestsText(totals)],
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
  const legend = LEGEND.map(([swatch, text]) => `<li><i class="swatch ${swatch}"></i>${text}</li>`).join('')
  const body = [
    `<header><h1>warmfold report <span class="session">${escapeHtml(report.sessionId)}</span></h1>`,
    `<p class="file">${escapeHtml(report.file)}</p>`,
    ...(report.forkOf
      ? [
          `<p class="fork-of">A fork of session ${escapeHtml(report.forkOf.parentSessionId)}: its first request ` +
            `replayed the parent's log up to line ${report.forkOf.parentLine}.</p>`,
        ]
      : []),
    `<p class="source source-${report.source}">${SOURCE_TEXT[report.source]}</p></header>`,
    '<section id="totals"><h2>Totals</h2><table class="totals">',
    ...rows.map(([name, value]) => `<tr><th scope="row">${name}</th><td>${escapeHtml(value)}</td></tr>`),
    `</table><p class="price">${escapeHtml(`price ${priceText(report.price)}`)}</p></section>`,
    `<section id="requests"><h2>Requests (${integer(totals.requests)})</h2>`,
    `<ul class="legend">${legend}</ul>`,
    `<div class="chart-scroll">${reportChartSvg(report)}</div>`,
    '<p class="hint">Hover a bar for its numbers and how its prompt diverged; hover a line for the ' +
      'rewrite.</p></section>',
    `<section id="breaks"><h2>Breaks (${integer(breaks.length)})</h2>`,
    breaks.length
      ? [
          tableHead('breaks', ['request', 'line', 'purpose', 'cause', 'prefilled', 'explanation']),
          ...breaks.map((request) => {
            const cause = request.break!.cause
            return (
              `<tr id="break-${request.number}"><td><a href="#request-${request.number}">#${request.number}</a></td>` +
              `<td>${request.line}</td><td>${escapeHtml(request.purpose)}</td>` +
              `<td><span class="cause cause-${classWord(cause)}">${escapeHtml(cause)}</span></td>` +
              `<td class="number">${prefilledText(request)}</td>` +
              `<td>${escapeHtml(request.break!.explanation)}</td></tr>`
            )
          }),
          '</tbody></table>',
        ].join('\n')
      : '<p>No breaks: every request read what it could from the cache.</p>',
    '</section>',
  ]
  body.push(
    ...loggedSection(
      'guards',
      'Summary guard',
      "Summary calls that were not a warm replay of the conversation's last request, seen before they were sent.",
      ['action', 'route', 'what differs'],
      report.guards,
      (guard) => [escapeHtml(guard.action), escapeHtml(guard.route), escapeHtml(guard.text)],
    ),
    ...loggedSection(
      'prune-decisions',
      'Prune decisions',
      'Prune passes that alone would have relieved the pressure: each lands only when what it saves on the ' +
        'following requests pays for the re-prefill it causes, otherwise the engine folds instead.',
      ['action', 'why'],
      report.pruneDecisions,
      (decision) => [escapeHtml(decision.action), escapeHtml(decision.text)],
    ),
    ...foldRowsHtml(report),
    ...loggedSection(
      'fold-timing',
      'Fold timing',
      "How long each fold's summary took and how long the conversation waited for it (seconds on the engine's " +
        'clock): a synchronous fold blocks the turn for its whole summary call, a background fold only for what ' +
        'is left when the request reaches the pressure threshold.',
      ['mode', 'summary', 'waited', 'hidden', 'at threshold', 'after the swap'],
      report.foldTimings,
      (fold) => [
        fold.mode,
        summaryStateText(fold).replace(/^summary /, ''),
        seconds(fold.waitedMs),
        seconds(fold.stallSavedMs),
        fold.statusAtThreshold,
        fold.discarded
          ? `discarded (${escapeHtml(fold.discarded.reason)}): ${escapeHtml(fold.discarded.detail)}`
          : `about ${fold.postSwapPrefillTokens.toLocaleString('en-US')} new tokens prefilled`,
      ],
    ),
    ...foldAuditHtml(report.foldAudits),
    ...loggedSection(
      'forks',
      'Forks',
      "Child sessions this session forked: each one's first request was this session's last request plus its " +
        "task, so it read this session's cache. Report a child by its session id.",
      ['child session', 'outcome', 'answer or reason'],
      report.forks,
      (fork) => [escapeHtml(fork.childSessionId), fork.outcome, escapeHtml(fork.text)],
    ),
  )
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
    `<style>${REPORT_STYLE}</style></head><body>`,
    ...body,
    '</body></html>',
    '',
  ].join('\n')
}

/** The chart's legend: each swatch's class and what it means. */
const LEGEND: ReadonlyArray<readonly [string, string]> = [
  ['cached', 'cached (read from the cache)'],
  ['written', 'written to the cache (prefilled)'],
  ['uncached', 'uncached (prefilled, not written)'],
  ['none', 'no usage in the log'],
  ['break', 'break'],
  ['purpose', 'not a conversation request (summary call)'],
  ['fold', 'fold'],
  ['prune', 'prune'],
]

/** What the numbers come from, per source. */
const SOURCE_TEXT: Readonly<Record<SessionReport['source'], string>> = {
  ledger: 'Numbers from the cache ledger (cache/observation events).',
  usage:
    'No cache ledger in this log: numbers from the provider usage on assistant/message and compaction/summary ' +
    'events (see the notes).',
  proxy: 'A warmfold proxy log: provider usage per request, breaks and compactions as the proxy found them.',
}
