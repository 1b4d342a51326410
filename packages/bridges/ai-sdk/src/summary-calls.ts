import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Message } from '@ai-sdk/provider'
import { APICallError } from '@ai-sdk/provider'
import type { SummaryAttempt } from '@warmfold/compaction'
import type { SummaryCallBudget, SummaryTransport } from '@warmfold/compaction-basic/engine-parts'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { CompactionRefusal, runSummaryCalls } from '@warmfold/compaction-basic/engine-parts'
import type { InnerResult } from './inner-call.ts'
import { callInner } from './inner-call.ts'

/** The trailing instruction: the engine's, as one user message of text (rule C3). */
export const INSTRUCTION_MESSAGE: LanguageModelV3Message = Object.freeze({
  role: 'user',
  content: [{ type: 'text', text: COMPACTION_INSTRUCTION }],
}) as LanguageModelV3Message

/** The summary calls of one fold. */
export type SummaryOutcome =
  | { readonly summary: string; readonly attempts: readonly SummaryAttempt[]; readonly calls: readonly InnerResult[] }
  | {
      readonly refusal: string
      /** The summary call failed (see {@link failedTransiently}): worth trying again soon. */
      readonly failed: boolean
      /** It failed because the caller's abort signal fired. */
      readonly aborted: boolean
      readonly attempts: readonly SummaryAttempt[]
      readonly calls: readonly InnerResult[]
    }

/**
 * Sends the summary request through the inner model with the engine's summary loop
 * (`runSummaryCalls`: its answer classifier, budget ladder and deadline, the same decisions as
 * `BasicCompactionEngine`), the AI SDK's `doGenerate` / `doStream` being its transport: a tool
 * call gets the very same request once more (tools never run: the inner model only answers); an
 * answer that spent its cap gets the same prompt with a larger `maxOutputTokens`; anything else
 * without a summary is a refusal. `onCall` sees every call as it returns.
 */
export async function summarizeThrough(
  model: LanguageModelV3,
  type: 'generate' | 'stream',
  request: LanguageModelV3CallOptions,
  budget: SummaryCallBudget,
  onCall: (call: InnerResult) => void,
): Promise<SummaryOutcome> {
  const calls: InnerResult[] = []
  const attempts: SummaryAttempt[] = []
  const transport: SummaryTransport<LanguageModelV3CallOptions> = {
    send: async (params, deadline) => {
      const own = params.abortSignal
      const abortSignal = deadline && own ? AbortSignal.any([own, deadline]) : (deadline ?? own)
      const call = await callInner(model, type, { ...params, ...(abortSignal ? { abortSignal } : {}) })
      calls.push(call)
      onCall(call)
      return call.result
    },
    settings: (params) => ({ maxTokens: params.maxOutputTokens }),
    next: (params, step) => {
      // fallbackEffort is refused with the options and no narrower replay is offered: only larger caps come.
      if (step.reason !== 'larger-cap') throw new Error(`the middleware cannot make a ${step.reason} call`)
      return { ...params, maxOutputTokens: step.maxTokens }
    },
    target: () => `${model.provider}/${model.modelId}`,
  }
  try {
    const outcome = await runSummaryCalls(transport, request, budget, {
      attempts,
      ...(request.abortSignal ? { signal: request.abortSignal } : {}),
    })
    return { summary: outcome.text, attempts: outcome.attempts, calls }
  } catch (error) {
    if (!(error instanceof CompactionRefusal)) throw error
    const made = error.attempts ?? attempts
    const aborted = error.code === 'cancelled'
    return { refusal: error.message, failed: failedTransiently(error, made), aborted, attempts: made, calls }
  }
}

/**
 * Whether a refusal is a summary call that failed rather than an answer without a usable summary:
 * its last call ended in an error or an abort (a provider error, a broken stream, the deadline),
 * unless the provider called the error not retryable (the same request would fail again).
 */
function failedTransiently(refusal: CompactionRefusal, attempts: readonly SummaryAttempt[]): boolean {
  const finish = attempts.at(-1)?.finishReason
  if (finish !== 'error' && finish !== 'aborted') return false
  const cause = refusal.cause
  return !(APICallError.isInstance(cause) && !cause.isRetryable)
}
