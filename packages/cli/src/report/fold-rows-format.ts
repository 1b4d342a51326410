import { escapeHtml } from './escape-html.ts'
import { loggedSection } from './html-table.ts'
import { integer, seconds, usd } from './report-format.ts'
import type { ReportFold, ReportFoldAttempt, SessionReport } from './report-model.ts'

/** `$0.00123`, or `1,234 input-token units` when the price has no dollar rate. */
function money(units: number, dollars: number | null): string {
  return dollars === null ? `${integer(units)} input-token units` : usd(dollars)
}

/** A part of a fold's cost in the report's currency (`units` priced like the whole). */
function part(report: SessionReport, units: number): string {
  const rate = report.price.usdPerMillionInput
  return money(units, rate === null ? null : (units * rate) / 1_000_000)
}

function waitText(ms: number | null): string {
  return ms === null ? 'no timing' : seconds(ms)
}

/** How an attempt ran and what started it: `background fold`, `sync fold (pressure)`. */
function kind(attempt: ReportFoldAttempt): string {
  if (attempt.mode === attempt.trigger) return `${attempt.mode} fold`
  return `${attempt.mode ?? 'a'} fold (${attempt.trigger})`
}

/** An attempt thrown away before the fold: what it was, why, what it cost and made the conversation wait. */
function thrownText(report: SessionReport, attempt: ReportFoldAttempt): string {
  const calls = `${attempt.summaryCalls} summary call(s) ${part(report, attempt.cost)}`
  const why = attempt.outcome === 'open' ? 'still open when the log ends' : `${attempt.outcome} (${attempt.reason})`
  return `${kind(attempt)} ${why}: ${calls}, waited ${waitText(attempt.waitedMs)}`
}

/** What the checkpoint replaced and what the audit found it dropped. */
function droppedText(fold: ReportFold): string {
  const parts: string[] = []
  if (fold.folded)
    parts.push(`folded ${integer(fold.folded.messages)} message(s) (~${integer(fold.folded.tokens)} tokens)`)
  if (fold.dropped)
    parts.push(
      fold.dropped.total === 0
        ? 'dropped no artifact'
        : `dropped ${integer(fold.dropped.total)} artifact(s)` +
            (fold.dropped.items.length ? `: ${fold.dropped.items.join(', ')}` : ''),
    )
  return parts.join('; ')
}

/** The cost line of a fold: the total, then its summary calls and the request after the swap. */
function costText(report: SessionReport, fold: ReportFold): string {
  const after = fold.afterSwap
    ? `, request #${fold.afterSwap.request} after the swap ${part(report, fold.afterSwap.cost)}`
    : ''
  const calls = `${fold.summaryCalls} summary call(s) ${part(report, fold.summaryCost)}`
  return `${money(fold.cost, fold.costUsd)} (${calls}${after})`
}

/** The totals line: every fold point, then the attempts thrown away on their own. */
function totalsText(report: SessionReport): string {
  const { foldTotals: totals } = report
  const thrown = totals.thrownAway
  const away = thrown.attempts
    ? `thrown away: ${thrown.attempts} attempt(s) (discarded or failed), ${money(thrown.cost, thrown.costUsd)}, ` +
      `waited ${waitText(thrown.waitedMs)}`
    : 'no attempt thrown away'
  const all = `in all: ${money(totals.cost, totals.costUsd)} over ${totals.folds} fold(s)`
  return `${all}, waited ${waitText(totals.waitedMs)}; ${away}`
}

/** The terminal's Folds section: a line per fold point, a line per attempt thrown away there, then the totals. */
export function foldRowsText(report: SessionReport): string[] {
  if (!report.folds.length) return []
  const lines = [
    '',
    `Folds (${report.folds.length} fold point(s); cost = summary calls + the first request after the swap, wait = ` +
      'what the conversation waited, attempts thrown away at the same point included):',
  ]
  for (const fold of report.folds) {
    const last = fold.attempts.at(-1)!
    const what = fold.committed ? kind(last) : 'no checkpoint'
    const dropped = droppedText(fold)
    lines.push(
      `  line ${fold.line}, after request #${fold.afterRequest}: ${what}: ${costText(report, fold)}, waited ` +
        `${waitText(fold.waitedMs)}${dropped ? `; ${dropped}` : ''}`,
    )
    for (const attempt of fold.attempts)
      if (attempt.outcome !== 'committed') lines.push(`    thrown away: ${thrownText(report, attempt)}`)
  }
  lines.push(`  ${totalsText(report)}`)
  return lines
}

/** The HTML page's Folds section (nothing without folds). */
export function foldRowsHtml(report: SessionReport): string[] {
  const section = loggedSection(
    'folds',
    'Folds',
    'Each fold point with what it cost (its summary calls and the first request after the swap, which prefills the ' +
      'checkpoint and the retained tail again) and what it made the conversation wait; attempts thrown away at the ' +
      'same point (a stale or superseded background fold, a refused summary) are on the same row, their cost and ' +
      'wait included.',
    ['fold', 'attempts thrown away', 'cost', 'waited', 'what it dropped'],
    report.folds,
    (fold) => [
      fold.committed ? escapeHtml(kind(fold.attempts.at(-1)!)) : 'no checkpoint',
      fold.attempts
        .filter((attempt) => attempt.outcome !== 'committed')
        .map((attempt) => escapeHtml(thrownText(report, attempt)))
        .join('<br>') || 'none',
      escapeHtml(costText(report, fold)),
      waitText(fold.waitedMs),
      escapeHtml(droppedText(fold)) || '-',
    ],
  )
  if (!section.length) return []
  section[section.length - 1] = `</tbody></table><p class="fold-totals">${escapeHtml(totalsText(report))}</p></section>`
  return section
}
