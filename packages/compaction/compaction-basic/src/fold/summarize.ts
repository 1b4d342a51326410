import type { Context } from '@cordisjs/core'
import type { SummaryAttempt } from '@warmfold/compaction'
import { CacheGuardError } from '@warmfold/cache-ledger'
import type { GenerateOptions } from '@warmfold/llm'
import { ContentAssembler, LlmError } from '@warmfold/llm'
import type { SummaryCallBudget } from './summary-attempts.ts'
import type { SummaryLoopResult, SummaryTransport } from './summary-loop.ts'
import { runSummaryCalls } from './summary-loop.ts'

/**
 * A summary the model wrote, with the request exactly as sent (`sent`: the options the adapter
 * received, defaults materialized) and every summary call made, in order.
 */
export type SummaryOutcome = SummaryLoopResult<GenerateOptions>

/**
 * Sends the summary request over `ctx.llm` through the summary loop (`runSummaryCalls`, which
 * records each call on `attempts` as it is made); every rung of its ladder is prepared by the LLM
 * service like the first call. A call the cache ledger's summary guard refused before it was sent
 * (`guard: 'refuse'`) is a refusal with the guard's reason, never retried (nothing was paid, so no
 * attempt is recorded).
 * @throws CompactionRefusal when no summary was written.
 */
export async function summarize(
  ctx: Context,
  request: GenerateOptions,
  budget: SummaryCallBudget,
  attempts: SummaryAttempt[] = [],
): Promise<SummaryOutcome> {
  const sent = await ctx.llm.prepare(request)
  return runSummaryCalls(llmTransport(ctx, budget), sent, budget, { attempts, signal: request.signal })
}

/** The summary loop's transport over `ctx.llm`: every request prepared (defaults materialized), the answer streamed. */
function llmTransport(ctx: Context, budget: SummaryCallBudget): SummaryTransport<GenerateOptions> {
  return {
    async send(sent, deadline) {
      const assembler = new ContentAssembler()
      const bounded = deadline
        ? { ...sent, signal: sent.signal ? AbortSignal.any([sent.signal, deadline]) : deadline }
        : sent
      for await (const chunk of ctx.llm.stream(bounded)) assembler.push(chunk)
      return assembler.result()
    },
    settings: (sent) => ({ maxTokens: sent.maxTokens, reasoningEffort: sent.reasoningEffort }),
    next(sent, step) {
      // Only the output cap changes: it is not part of the cached prompt.
      if (step.reason === 'larger-cap') return ctx.llm.prepare({ ...sent, maxTokens: step.maxTokens })
      // The region's messages only: the whole last request left no room for this cap.
      if (step.reason === 'narrower-replay')
        return ctx.llm.prepare({
          ...(budget.narrower as { request: GenerateOptions }).request,
          maxTokens: step.maxTokens,
          signal: sent.signal,
        })
      return ctx.llm.prepare({ ...sent, reasoningEffort: step.reasoningEffort, maxTokens: step.maxTokens })
    },
    target: (sent) => `${sent.provider}/${sent.model}`,
    failure(error) {
      // The cache ledger's guard refused the call before it was sent: its reason is the refusal's.
      if (CacheGuardError.isInstance(error))
        return { unsent: `the cache guard refused the summary call: ${error.reason}` }
      if (!LlmError.isInstance(error)) return {}
      return { llmCode: error.code, aborted: error.code === 'ABORTED' }
    },
  }
}
