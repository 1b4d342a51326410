import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3Usage,
} from '@ai-sdk/provider'
import type { SummaryAttempt, SummaryAttemptReason } from '@warmfold/compaction'
import type { SummaryCallBudget } from '@warmfold/compaction-basic/engine-parts'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { classifySummaryAnswer, nextSummaryCall } from '@warmfold/compaction-basic/engine-parts'
import type { TokenUsage } from '@warmfold/llm'
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
  | { readonly refusal: string; readonly attempts: readonly SummaryAttempt[]; readonly calls: readonly InnerResult[] }

/** AI SDK usage as warmfold's disjoint buckets (an absent field stays undefined). */
export function warmfoldUsage(usage: LanguageModelV3Usage | undefined): TokenUsage | undefined {
  if (!usage) return undefined
  return {
    ...(usage.inputTokens.noCache === undefined ? {} : { inputTokens: usage.inputTokens.noCache }),
    ...(usage.inputTokens.cacheRead === undefined ? {} : { cacheReadTokens: usage.inputTokens.cacheRead }),
    ...(usage.inputTokens.cacheWrite === undefined ? {} : { cacheWriteTokens: usage.inputTokens.cacheWrite }),
    ...(usage.outputTokens.total === undefined ? {} : { outputTokens: usage.outputTokens.total }),
    ...(usage.outputTokens.reasoning === undefined ? {} : { reasoningTokens: usage.outputTokens.reasoning }),
  }
}

/**
 * Sends the summary request through the inner model and reads the answer with the engine's
 * classifier and budget ladder (the same decisions as `BasicCompactionEngine`): a tool call gets
 * the very same request once more (tools never run: the inner model only answers); an answer
 * that spent its cap gets the same prompt with a larger `maxOutputTokens`; anything else without
 * a summary is a refusal. `onCall` sees every call as it returns.
 */
export async function summarizeThrough(
  model: LanguageModelV3,
  type: 'generate' | 'stream',
  request: LanguageModelV3CallOptions,
  budget: SummaryCallBudget,
  onCall: (call: InnerResult) => void,
): Promise<SummaryOutcome> {
  const attempts: SummaryAttempt[] = []
  const calls: InnerResult[] = []
  let maxTokens = request.maxOutputTokens as number
  let reason: SummaryAttemptReason = 'first'
  let toolCallRetried = false
  for (;;) {
    const deadline = budget.deadlineMs > 0 ? AbortSignal.timeout(budget.deadlineMs) : undefined
    const abortSignal =
      deadline && request.abortSignal
        ? AbortSignal.any([request.abortSignal, deadline])
        : (deadline ?? request.abortSignal)
    let call: InnerResult
    try {
      call = await callInner(model, type, {
        ...request,
        maxOutputTokens: maxTokens,
        ...(abortSignal ? { abortSignal } : {}),
      })
    } catch (error) {
      attempts.push(
        Object.freeze({ reason, maxTokens, finishReason: request.abortSignal?.aborted ? 'aborted' : 'error' }),
      )
      const why =
        deadline?.aborted && !request.abortSignal?.aborted
          ? `did not finish within summaryDeadlineMs (${budget.deadlineMs} ms)`
          : `failed: ${error instanceof Error ? error.message : String(error)}`
      return { refusal: `the summary call ${why}`, attempts, calls }
    }
    calls.push(call)
    const usage = warmfoldUsage(call.usage)
    attempts.push(
      Object.freeze({ reason, maxTokens, finishReason: call.result.finishReason, ...(usage ? { usage } : {}) }),
    )
    onCall(call)
    const answer = classifySummaryAnswer(call.result, maxTokens)
    switch (answer.kind) {
      case 'summary':
        return { summary: answer.text, attempts, calls }
      case 'refused':
        return { refusal: answer.why, attempts, calls }
      case 'tool-call':
        if (toolCallRetried) return { refusal: 'the summary call answered with a tool call twice', attempts, calls }
        toolCallRetried = true
        reason = 'tool-call'
        continue
      case 'spent': {
        const next = nextSummaryCall(attempts, budget)
        if ('refuse' in next) return { refusal: `${answer.why}; ${next.refuse}`, attempts, calls }
        // fallbackEffort is refused with the options, so the only next call is a larger cap.
        reason = next.reason
        maxTokens = next.maxTokens
      }
    }
  }
}
