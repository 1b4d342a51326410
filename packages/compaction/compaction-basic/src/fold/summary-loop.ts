import type { SummaryAttempt, SummaryAttemptReason } from '@warmfold/compaction'
import type { GenerateResult } from '@warmfold/llm'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { NextSummaryCall, SummaryCallBudget } from './summary-attempts.ts'
import { classifySummaryAnswer, nextSummaryCall } from './summary-attempts.ts'

/** A rung of the budget ladder after a spent answer (see `nextSummaryCall`). */
export type SummaryLadderStep = Exclude<NextSummaryCall, { readonly refuse: string }>

/**
 * How the summary loop reaches a model: the engine sends over `ctx.llm`, a bridge over its SDK's
 * model (the AI SDK's `doGenerate` / `doStream`). `Request` is the transport's own request type.
 */
export interface SummaryTransport<Request> {
  /** Sends `request` once, `deadline` joined to its own abort signal, and collects the answer. */
  send(request: Request, deadline: AbortSignal | undefined): Promise<GenerateResult>
  /** The output cap and reasoning effort `request` carries, for its attempt record. */
  settings(request: Request): { readonly maxTokens: number | undefined; readonly reasoningEffort?: string }
  /** The request of the next rung: only the output cap, the effort or the replayed span changes. */
  next(request: Request, step: SummaryLadderStep): Promise<Request> | Request
  /** Where `request` goes (`provider/model`), for a refusal's sentence. */
  target(request: Request): string
  /**
   * What a failed call's error says: the provider's error code, whether it was an abort, or why
   * the call was refused before it was sent (nothing paid: no attempt is recorded).
   */
  failure?(error: unknown): { readonly llmCode?: string; readonly aborted?: boolean; readonly unsent?: string }
}

/** The summary the model wrote, the request that wrote it, and every call made. */
export interface SummaryLoopResult<Request> {
  readonly text: string
  readonly sent: Request
  readonly result: GenerateResult
  readonly attempts: readonly SummaryAttempt[]
}

/**
 * The summary-call loop, whatever the transport (the one copy the engine and the bridges drive).
 * It sends `first` and checks the answer (see `classifySummaryAnswer`):
 * - a tool call: the very same request once more (the same cached prefix);
 * - an answer that spent its output cap without a summary (reasoning only, truncated) or has no
 *   text: the budget ladder (`nextSummaryCall`): a larger cap on the same prompt, the region-only
 *   replay (`budget.narrower`), then only when `budget.fallbackEffort` is set one call at that
 *   effort (a deliberate cache break);
 * - anything else without a summary, a failed call, or nothing left to try: a refusal (no
 *   checkpoint is written) that carries every call made so far.
 * Each call is abandoned after `budget.deadlineMs` of wall-clock time (0: never).
 * @param options.signal the caller's abort signal (an abort is a `cancelled` refusal).
 * @param options.attempts where the calls are recorded as they are made: a call in flight is on
 *   it as `aborted` until it settles, so a caller that must close its bracket before the call
 *   ends logs every call it made.
 * @throws CompactionRefusal `summary` (with the provider's code; `TIMEOUT` past the deadline) or
 *   `cancelled`, carrying the attempts.
 */
export async function runSummaryCalls<Request>(
  transport: SummaryTransport<Request>,
  first: Request,
  budget: SummaryCallBudget,
  options: { readonly signal?: AbortSignal; readonly attempts?: SummaryAttempt[] } = {},
): Promise<SummaryLoopResult<Request>> {
  const attempts = options.attempts ?? []
  const refuse = (message: string, cause?: unknown) =>
    new CompactionRefusal('summary', message, { ...(cause === undefined ? {} : { cause }), attempts: [...attempts] })
  let sent = first
  let reason: SummaryAttemptReason = 'first'
  let toolCallRetried = false
  for (;;) {
    const result = await call(transport, sent, reason, attempts, options.signal, budget.deadlineMs)
    const answer = classifySummaryAnswer(result, transport.settings(sent).maxTokens)
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
        // A larger cap changes no prompt byte: the call reads everything the previous one wrote.
        try {
          sent = await transport.next(sent, next)
        } catch (error) {
          // Only the fallback effort may be unsendable to the route; any other failure is the transport's own.
          if (next.reason !== 'fallback-effort') throw error
          const to = transport.target(sent)
          const effort = `summaryBudget.fallbackEffort "${next.reasoningEffort}"`
          throw refuse(`${answer.why}; ${effort} cannot be sent to ${to}: ${describe(error)}`, error)
        }
      }
    }
  }
}

/**
 * Makes one call and records it on `attempts`, also when it fails.
 * @throws CompactionRefusal `cancelled` when aborted, `summary` (with the provider's code;
 *   `TIMEOUT` past the deadline) when it failed.
 */
async function call<Request>(
  transport: SummaryTransport<Request>,
  sent: Request,
  reason: SummaryAttemptReason,
  attempts: SummaryAttempt[],
  signal: AbortSignal | undefined,
  deadlineMs: number,
): Promise<GenerateResult> {
  const { maxTokens, reasoningEffort } = transport.settings(sent)
  const entry = (finishReason: GenerateResult['finishReason'], result?: GenerateResult): SummaryAttempt =>
    Object.freeze({
      reason,
      maxTokens,
      ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
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
    const result = await transport.send(sent, deadline)
    record(result.finishReason, result)
    return result
  } catch (error) {
    const failure = transport.failure?.(error) ?? {}
    if (failure.unsent !== undefined) {
      // Never sent, nothing paid: not a call.
      attempts.splice(index, 1)
      throw new CompactionRefusal('summary', failure.unsent, { cause: error, attempts: [...attempts] })
    }
    if (deadline?.aborted && !signal?.aborted) {
      record('error')
      throw new CompactionRefusal(
        'summary',
        `summary call did not finish within summaryDeadlineMs (${deadlineMs} ms); no checkpoint was committed`,
        { cause: error, llmCode: 'TIMEOUT', attempts: [...attempts] },
      )
    }
    const aborted = signal?.aborted || failure.aborted === true
    record(aborted ? 'aborted' : 'error')
    const made = [...attempts]
    if (aborted)
      throw new CompactionRefusal('cancelled', `summary call aborted: ${describe(signal?.reason ?? error)}`, {
        cause: error,
        attempts: made,
      })
    const { llmCode } = failure
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
