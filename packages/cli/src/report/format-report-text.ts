import { printable } from '../shared/printable-text.ts'
import { foldAuditText } from './fold-audit-events.ts'
import { foldRowsText } from './fold-rows-format.ts'
import { foldTimingText } from './fold-timing-events.ts'
import { forkText } from './fork-events.ts'
import type { SessionReport } from './report-model.ts'
import { costText, integer, percent, prefilledText, priceText, purposesText, sourceText } from './report-format.ts'

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
    `requests  ${integer(totals.requests)}${totals.requests ? `: ${purposesText(totals)}` : ''}` +
      (totals.withoutUsage ? ` (${integer(totals.withoutUsage)} without usage)` : ''),
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
    for (const guard of report.guards)
      lines.push(
        `  line ${guard.line}, after request #${guard.afterRequest}: ${guard.action}, ${guard.route}: ${guard.text}`,
      )
  }
  if (report.pruneDecisions.length) {
    lines.push(
      '',
      `Prune decisions (${report.pruneDecisions.length} pass(es) that alone would have relieved the pressure):`,
    )
    for (const decision of report.pruneDecisions)
      lines.push(
        `  line ${decision.line}, after request #${decision.afterRequest}: ${decision.action}: ${decision.text}`,
      )
  }
  lines.push(...foldRowsText(report))
  if (report.foldTimings.length) {
    lines.push('', `Fold timing (${report.foldTimings.length} fold(s); seconds on the engine's clock):`)
    for (const fold of report.foldTimings)
      lines.push(`  line ${fold.line}, after request #${fold.afterRequest}: ${foldTimingText(fold)}`)
  }
  if (report.foldAudits.length) {
    lines.push(
      '',
      `Fold audit (${report.foldAudits.length} fold(s); artifacts of the folded region the model still reads, ` +
        'verbatim):',
    )
    for (const audit of report.foldAudits) {
      const [first, ...rest] = foldAuditText(audit)
      lines.push(
        `  line ${audit.line}, after request #${audit.afterRequest}: ${first}`,
        ...rest.map((line) => `    ${line}`),
      )
    }
  }
  if (report.forks.length) {
    lines.push('', `Forks (${report.forks.length} child session(s); report each by its id):`)
    for (const fork of report.forks)
      lines.push(`  line ${fork.line}, after request #${fork.afterRequest}: ${forkText(fork)}`)
  }
  lines.push('', 'Notes:', `  - price ${priceText(report.price)}`, ...report.notes.map((note) => `  - ${note}`))
  return lines.map(printable).join('\n')
}
