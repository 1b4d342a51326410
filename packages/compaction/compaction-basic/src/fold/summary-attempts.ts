import type { SummaryAttempt } from '@warmfold/compaction'
import type { GenerateOptions, GenerateResult } from '@warmfold/llm'
import type { ResolvedSummaryBudget } from '../config/summary-budget-policy.ts'

/** What one summary answer means for the compaction. */
export type SummaryAnswer =
  /** A summary to commit (trimmed). */
  | { readonly kind: 'summary'; readonly text: string }
  /** A tool call instead of a summary. */
  | { readonly kind: 'tool-call' }
  /**
   * No usable summary because the answer ran out of output budget (reasoning only, truncated
   * text) or wrote no text at all: a larger cap, or a lower effort, may give one. `why` says which.
   */
  | { readonly kind: 'spent'; readonly why: string }
  /** No text for a reason more budget does not address (a content filter, a provider error). */
  | { readonly kind: 'refused'; readonly why: string }

/**
 * Classifies a summary answer. The detection rule, in order:
 * 1. any tool call → `tool-call`;
 * 2. finish reason `max-tokens` → `spent`: reasoning with no text (the inherited effort spent
 *    the whole cap), no content at all, or text cut off mid-summary (never committed);
 * 3. no text with finish reason `stop` (the model ended without writing one, often after
 *    reasoning only) → `spent`;
 * 4. any other finish reason than `stop` (`content-filter`, `error`, `aborted`, a `tool-calls`
 *    without a call) → `refused`, with or without text: the text may stop mid-summary, and a
 *    cut-off summary must never replace the history it folds;
 * 5. otherwise (text, finish reason `stop`) → `summary`.
 * @param maxTokens the cap the call sent, for the description.
 */
export function classifySummaryAnswer(result: GenerateResult, maxTokens: number | undefined): SummaryAnswer {
  if (result.content.some((block) => block.type === 'tool-call')) return { kind: 'tool-call' }
  const text = result.content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('')
    .trim()
  const reasoned = result.content.some((block) => block.type === 'reasoning' && block.text.trim() !== '')
  const cap = `maxTokens ${maxTokens ?? '(adapter default)'}`
  if (result.finishReason === 'max-tokens') {
    if (text) return { kind: 'spent', why: `summary truncated at ${cap} (an incomplete checkpoint is never committed)` }
    return {
      kind: 'spent',
      why: reasoned
        ? `summary call returned no text: the model spent the whole output cap (${cap}) on reasoning`
        : `summary call returned no text before the output cap (${cap})`,
    }
  }
  if (result.finishReason !== 'stop') {
    return {
      kind: 'refused',
      why: text
        ? `summary call ended with finish reason ${result.finishReason} after ${text.length} characters of text, ` +
          'which may stop mid-summary; it is not committed'
        : `summary call returned no text (finish reason ${result.finishReason})`,
    }
  }
  if (text) return { kind: 'summary', text }
  return {
    kind: 'spent',
    why: `summary call returned no text (finish reason stop${reasoned ? ', reasoning only' : ''})`,
  }
}

/** The budget of one compaction's summary calls: the policy's `summaryBudget` and the prompt's room. */
export interface SummaryCallBudget extends ResolvedSummaryBudget {
  /** The largest `maxTokens` the prompt allows: what the target's window leaves after it. */
  readonly ceilingTokens: number
  /** Wall-clock ms each call may take (the policy's `summaryDeadlineMs`); 0: no limit. */
  readonly deadlineMs: number
  /**
   * When the first call replays the whole last request: the request that replays only the
   * region, and the larger ceiling its smaller prompt leaves. A larger cap the whole replay has
   * no room for is asked on it instead (`narrower-replay`).
   */
  readonly narrower?: { readonly request: GenerateOptions; readonly ceilingTokens: number }
}

/** The next summary call after a `spent` answer, or why there is none. */
export type NextSummaryCall =
  /** The same prompt with a larger cap: it reads what the previous calls wrote. */
  | { readonly reason: 'larger-cap'; readonly maxTokens: number }
  /** The region-only replay (`budget.narrower`) with a larger cap than the whole replay has room for. */
  | { readonly reason: 'narrower-replay'; readonly maxTokens: number }
  /** The same messages at `reasoningEffort`: a deliberate cache break. */
  | { readonly reason: 'fallback-effort'; readonly reasoningEffort: string; readonly maxTokens: number }
  /** No call is left; `refuse` completes the refusal's sentence. */
  | { readonly refuse: string }

/**
 * Decides the call after a `spent` answer from the calls made so far (the last one is the spent
 * answer): first up to `retries` larger caps, each `ceil(previous × growth)` and at most the
 * prompt's ceiling; a cap the whole-request replay has no room for moves to the region-only
 * replay (`budget.narrower`, once), whose ceiling is larger; then, only when configured, one call
 * at `fallbackEffort` with the largest cap reached; then nothing.
 */
export function nextSummaryCall(attempts: readonly SummaryAttempt[], budget: SummaryCallBudget): NextSummaryCall {
  const last = attempts.at(-1)
  if (!last) throw new Error('nextSummaryCall needs the spent call')
  const caps = attempts
    .filter((attempt) => attempt.reason !== 'tool-call' && attempt.reason !== 'fallback-effort')
    .map((attempt) => attempt.maxTokens ?? '(adapter default)')
  const narrowed = attempts.some((attempt) => attempt.reason === 'narrower-replay')
  const history =
    `${caps.length} call(s) ` +
    `${narrowed ? 'growing the cap (the last on the region-only replay)' : 'on the same prompt'} with maxTokens ` +
    `${caps.join(' → ')}`
  const fallback = attempts.find((attempt) => attempt.reason === 'fallback-effort')
  if (fallback)
    return {
      refuse:
        `that was the summaryBudget.fallbackEffort call at effort ${fallback.reasoningEffort} (a cache break), ` +
        `after ${history}`,
    }
  const ceiling = narrowed && budget.narrower ? budget.narrower.ceilingTokens : budget.ceilingTokens
  const canNarrow = !narrowed && budget.narrower !== undefined && budget.narrower.ceilingTokens > budget.ceilingTokens
  const cap = last.maxTokens
  const larger = attempts.filter(
    (attempt) => attempt.reason === 'larger-cap' || attempt.reason === 'narrower-replay',
  ).length
  if (larger < budget.retries && cap !== undefined) {
    const wanted = Math.ceil(cap * budget.growth)
    if (cap < ceiling && (wanted <= ceiling || !canNarrow))
      return { reason: 'larger-cap', maxTokens: Math.min(wanted, ceiling) }
    if (canNarrow)
      return {
        reason: 'narrower-replay',
        maxTokens: Math.min(wanted, (budget.narrower as { ceilingTokens: number }).ceilingTokens),
      }
  }
  const stopped =
    cap === undefined || cap >= ceiling
      ? `${history}, the last at the ceiling: all the summary budget leaves after the prompt (${ceiling} tokens)`
      : `${history} (summaryBudget.retries ${budget.retries})`
  const effort = budget.fallbackEffort
  if (effort === undefined)
    return {
      refuse: `after ${stopped}; summaryBudget.fallbackEffort is not set, so no cold call at a lower effort was made`,
    }
  if (effort === last.reasoningEffort)
    return {
      refuse: `after ${stopped}; summaryBudget.fallbackEffort "${effort}" is the effort these calls already used`,
    }
  return { reason: 'fallback-effort', reasoningEffort: effort, maxTokens: cap ?? ceiling }
}
