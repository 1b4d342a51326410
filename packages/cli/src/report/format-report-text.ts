import { printable } from '../shared/printable-text.ts'
import { foldAuditText } from './fold-audit-events.ts'
import { foldRowsText } from './fold-rows-format.ts'
import { foldTimingText } from './fold-timing-events.ts'
import { forkText } from './fork-events.ts'
import type { SessionReport } from './report-model.ts'
import { costText, integer, percent, prefilledText, priceText, requestsText, sourceText } from './report-format.ts'

/**
 * The terminal summary of a report: totals, cost, every break with its cause, the summary
 * guard's findings and the notes needed to read the numbers. Ends without a newline. Control
 * characters in strings from the log are printed as `\u` escapes, so a log cannot move the cursor,
 * recolour or retitle the terminal.
 */
export function formatReportText(report: SessionReport): string {
  const { totals } = report
  const lines = [
    `warmfold report: ${report.file} (session ${report.sessionId}), numbers from ${sourceText(report.source)}`,
    ...(report.forkOf
      ? [
          `a fork of session ${report.forkOf.parentSessionId} (its first request replayed the parent's log up to ` +
            `line ${report.forkOf.parentLine})`,
        ]
      : []),
    '',
    `requests  ${requestsText(totals)}`,
    `prompt    ${integer(totals.prompt)} tokens: ${integer(totals.cached)} cached (${percent(totals.hitRatio)}), ` +
      `${integer(totals.written + totals.uncached)} prefilled (${integer(totals.written)} written, ` +
      `${integer(totals.uncached)} uncached)`,
    `output    ${integer(totals.output)} tokens`,
    `cost      ${costText(totals)}`,
    `rewrites  ${integer(totals.folds)} fold(s), ${integer(totals.prunes)} pruned tool result(s)`,
    `breaks    ${integer(totals.breaks)}`,
  ]
  const breaks = report.requests.filter((request) => request.break)
  if (breaks.length) {
    lines.push('', 'Breaks (request, log line, purpose, cause, prefilled tokens: explanation):')
    for (const request of breaks) {
      lines.push(
        `  #${request.number}  line ${request.line}  ${request.purpose}  ${request.break!.cause}  ` +
          `${prefilledText(request)}: ${request.break!.explanation}`,
      )
    }
  }
  if (report.guards.length) {
    lines.push(
      '',
      `Summary guard (${report.guards.length} summary call(s) that were not a warm replay of the conversation):`,
    )
    for (const guard of report.guards) lines.push(`${loggedAt(guard)}${guard.action}, ${guard.route}: ${guard.text}`)
  }
  if (report.pruneDecisions.length) {
    lines.push(
      '',
      `Prune decisions (${report.pruneDecisions.length} pass(es) that alone would have relieved the pressure):`,
    )
    for (const decision of report.pruneDecisions)
      lines.push(`${loggedAt(decision)}${decision.action}: ${decision.text}`)
  }
  lines.push(...foldRowsText(report))
  if (report.foldTimings.length) {
    lines.push('', `Fold timing (${report.foldTimings.length} fold(s); seconds on the engine's clock):`)
    for (const fold of report.foldTimings) lines.push(`${loggedAt(fold)}${foldTimingText(fold)}`)
  }
  if (report.foldAudits.length) {
    lines.push(
      '',
      `Fold audit (${report.foldAudits.length} fold(s); artifacts of the folded region the model still reads, ` +
        'verbatim):',
    )
    for (const audit of report.foldAudits) {
      const [first, ...rest] = foldAuditText(audit)
      lines.push(`${loggedAt(audit)}${first}`, ...rest.map((line) => `    ${line}`))
    }
  }
  if (report.forks.length) {
    lines.push('', `Forks (${report.forks.length} child session(s); report each by its id):`)
    for (const fork of report.forks) lines.push(`${loggedAt(fork)}${forkText(fork)}`)
  }
  lines.push('', 'Notes:', `  - price ${priceText(report.price)}`, ...report.notes.map((note) => `  - ${note}`))
  return lines.map(printable).join('\n')
}

/** How a line for something logged between requests starts: `  line 12, after request #3: `. */
function loggedAt(item: { readonly line: number; readonly afterRequest: number }): string {
  return `  line ${item.line}, after request #${item.afterRequest}: `
}
