import type { GenerateOptions } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SUMMARY_RETRY_RATIO } from './summary-budget.ts'

/** Per session, per summary target (`provider/model`): the prompt + output budget to stay under. */
const limits = new WeakMap<Session, Map<string, number>>()

function targetOf(request: Pick<GenerateOptions, 'provider' | 'model'>): string {
  return `${request.provider}/${request.model}`
}

/**
 * The budget (prompt estimate + `maxTokens`) a summary call of `session` to `request`'s target
 * must stay under, learned from the provider rejecting a larger call as too long (its tokenizer
 * counts more than the estimate); `limitTokens` when nothing was learned. So a provider rejects
 * one summary call per session and target at most once for its tokenizer, not once per fold.
 */
export function summaryLimitFor(
  session: Session,
  request: Pick<GenerateOptions, 'provider' | 'model'>,
  limitTokens: number,
): number {
  return Math.min(limitTokens, limits.get(session)?.get(targetOf(request)) ?? Number.POSITIVE_INFINITY)
}

/**
 * Records that the provider rejected a summary call of about `promptTokens` + `maxTokens` as too
 * long: later calls of the session to that target stay under {@link SUMMARY_RETRY_RATIO} of it.
 * @returns the new limit.
 */
export function learnSummaryLimit(
  session: Session,
  request: Pick<GenerateOptions, 'provider' | 'model'>,
  promptTokens: number,
  maxTokens: number,
): number {
  const limit = Math.floor((promptTokens + maxTokens) * SUMMARY_RETRY_RATIO)
  let byTarget = limits.get(session)
  if (!byTarget) limits.set(session, (byTarget = new Map()))
  const key = targetOf(request)
  byTarget.set(key, Math.min(limit, byTarget.get(key) ?? Number.POSITIVE_INFINITY))
  return limit
}
