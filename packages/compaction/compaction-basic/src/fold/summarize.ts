import type { Context } from '@cordisjs/core'
import type { SummaryAttempt, SummaryAttemptReason } from '@warmfold/compaction'
import { CacheGuardError } from '@warmfold/cache-ledger'
import type { GenerateOptions, GenerateResult } from '@warmfold/llm'
import { ContentAssembler, LlmError } from '@warmfold/llm'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { SummaryCallBudget } from './summary-attempts.ts'
import { classifySummaryAnswer, nextSummaryCall } from './summary-attempts.ts'

/** A summary the model wrote, with the request exactly as sent. */
export interface SummaryOutcome {
  readonly text: string
  /** The options the adapter received for the call that wrote the summary (defaults materialized). */
  readonly sent: GenerateOptions
  readonly result: GenerateResult
  /** Every summary call made, in order; the last one wrote the summary. */
  readonly attempts: readonly SummaryAttempt[]
}

/**
 * Sends the summary request and checks the answer (see `classifySummaryAnswer`):
 * - a tool call: the very same request once more (the same cached prefix);
 * - an answer that spent its output cap without a summary (reasoning only, truncated) or has no
 *   text: the same prompt with a larger `maxTokens`, up to `budget.retries` times, never above
 *   `budget.ceilingTokens` (a cap the whole-request replay has no room for is asked on the
 *   region-only replay, `budget.narrower`); then, only when `budget.fallbackEffort` is set, one call at that
 *   effort (a deliberate cache break, recorded as such);
 * - anything else without a summary, a failed call, or nothing left to try: a refusal (no
 *   checkpoint is written) that carries every call made so far.
 * - a call the cache ledger's summary guard refused before it was sent (`guard: 'refuse'`): a
 *   refusal with the guard's reason, never retried (nothing was paid, so no attempt is recorded).
 *
 * @param attempts where the calls are recorded as they are made (default: a new array): a call
 *   in flight is on it as `aborted` until it settles, so a caller that must close its bracket
 *   before the call ends (the session is closing) logs every call it made.
 */
export async function summarize(
  ctx: Context,
  request: GenerateOptions,
  budget: SummaryCallBudget,
  attempts: SummaryAttempt[] = [],
): Promise<SummaryOutcome> {
  const refuse = (message: string, options: { cause?: unknown; llmCode?: string } = {}) =>
    new CompactionRefusal('summary', message, { ...options, attempts: [...attempts] })
  let sent = await ctx.llm.prepare(request)
  let reason: SummaryAttemptReason = 'first'
  let toolCallRetried = false
  for (;;) {
    const result = await call(ctx, sent, reason, attempts, request.signal, budget.deadlineMs)
    const answer = classifySummaryAnswer(result, sent.maxTokens)
    switch (answer.kind) {
      case 'summary':
        return { text: answer.text, sent, result, attempts }
      case 'refused':
        throw refuse(answer.why)
      case 'tool-call':
        if (toolCallRetried) throw refuse('summary call answered with a tool call twice; no checkpoint was committed')
        toolCallRetried = true
        reason = 'tool-call'
        continue
      case 'spent': {
        const next = nextSummaryCall(attempts, budget)
        if ('refuse' in next) throw refuse(`${answer.why}; ${next.refuse}; no checkpoint was committed`)
        reason = next.reason
        if (next.reason === 'larger-cap') {
          // Only the output cap changes: it is not part of the cached prompt, so this call reads
          // everything the previous one wrote.
          sent = await ctx.llm.prepare({ ...sent, maxTokens: next.maxTokens })
          continue
        }
        if (next.reason === 'narrower-replay') {
          // The region's messages only: the whole last request left no room for this cap.
          sent = await ctx.llm.prepare({
            ...(budget.narrower as { request: GenerateOptions }).request,
            maxTokens: next.maxTokens,
            signal: sent.signal,
          })
          continue
        }
        try {
          sent = await ctx.llm.prepare({ ...sent, reasoningEffort: next.reasoningEffort, maxTokens: next.maxTokens })
        } catch (error) {
          throw refuse(
            `${answer.why}; summaryBudget.fallbackEffort "${next.reasoningEffort}" cannot be sent to ` +
              `${sent.provider}/${sent.model}: ${describe(error)}`,
            { cause: error },
          )
        }
      }
    }
  }
}

/**
 * Makes one call and records it on `attempts`, also when it fails. The call is abandoned after
 * `deadlineMs` of wall-clock time (0: never).
 * @throws CompactionRefusal `cancelled` when aborted, `summary` (with the LLM code; `TIMEOUT` past
 *   the deadline) when it failed.
 */
async function call(
  ctx: Context,
  sent: GenerateOptions,
  reason: SummaryAttemptReason,
  attempts: SummaryAttempt[],
  signal: AbortSignal | undefined,
  deadlineMs: number,
): Promise<GenerateResult> {
  const entry = (finishReason: GenerateResult['finishReason'], result?: GenerateResult): SummaryAttempt =>
    Object.freeze({
      reason,
      maxTokens: sent.maxTokens,
      ...(sent.reasoningEffort === undefined ? {} : { reasoningEffort: sent.reasoningEffort }),
      finishReason,
      ...(result?.usage ? { usage: result.usage } : {}),
    })
  // On the list while in flight (as aborted, what it is if nobody waits for it), replaced once it settles.
  const index = attempts.push(entry('aborted')) - 1
  const record = (finishReason: GenerateResult['finishReason'], result?: GenerateResult) =>
    void (attempts[index] = entry(finishReason, result))
  // An unref'd timer: a pending deadline never keeps a host process alive.
  const deadline = deadlineMs > 0 ? AbortSignal.timeout(deadlineMs) : undefined
  try {
    const assembler = new ContentAssembler()
    const bounded = deadline
      ? { ...sent, signal: sent.signal ? AbortSignal.any([sent.signal, deadline]) : deadline }
      : sent
    for await (const chunk of ctx.llm.stream(bounded)) assembler.push(chunk)
    const result = assembler.result()
    record(result.finishReason, result)
    return result
  } catch (error) {
    // The cache ledger's guard refused the call before it was sent: its reason is the refusal's.
    if (CacheGuardError.isInstance(error)) {
      // Never sent, nothing paid: not a call.
      attempts.splice(index, 1)
      throw new CompactionRefusal('summary', `the cache guard refused the summary call: ${error.reason}`, {
        cause: error,
        attempts: [...attempts],
      })
    }
    if (deadline?.aborted && !signal?.aborted) {
      record('error')
      throw new CompactionRefusal(
        'summary',
        `summary call did not finish within summaryDeadlineMs (${deadlineMs} ms); no checkpoint was committed`,
        { cause: error, llmCode: 'TIMEOUT', attempts: [...attempts] },
      )
    }
    const aborted = signal?.aborted || (LlmError.isInstance(error) && error.code === 'ABORTED')
    record(aborted ? 'aborted' : 'error')
    const made = [...attempts]
    if (aborted)
      throw new CompactionRefusal('cancelled', `summary call aborted: ${describe(signal?.reason ?? error)}`, {
        cause: error,
        attempts: made,
      })
    const llmCode = LlmError.isInstance(error) ? error.code : undefined
    throw new CompactionRefusal('summary', `summary call failed${llmCode ? ` (${llmCode})` : ''}: ${describe(error)}`, {
      cause: error,
      llmCode,
      attempts: made,
    })
  }
}

function describe(value: unknown): string {
  return value instanceof Error ? value.message : String(value)
}
