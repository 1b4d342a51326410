import type { Context } from '@cordisjs/core'
import type { GenerateOptions, GenerateResult } from '@warmfold/llm'
import { CacheGuardError } from '@warmfold/cache-ledger'
import { ContentAssembler, LlmError } from '@warmfold/llm'
import { CompactionRefusal } from './compaction-refusal.ts'

/** A summary the model wrote, with the request exactly as sent. */
export interface SummaryOutcome {
  readonly text: string
  /** The options the adapter received (defaults materialized). */
  readonly sent: GenerateOptions
  readonly result: GenerateResult
  /** Summary calls made (2 when the first answer was a tool call). */
  readonly calls: number
}

/**
 * Sends the summary request and checks the answer. Refusals (no checkpoint is written):
 * truncated at `maxTokens`, no text, a tool call twice (the first one is retried once with
 * the very same request, so the same cached prefix), a failed call, or a call the cache
 * ledger's summary guard refused (`guard: 'refuse'`; never retried).
 */
export async function summarize(ctx: Context, request: GenerateOptions): Promise<SummaryOutcome> {
  const sent = await ctx.llm.prepare(request)
  for (let call = 1; call <= 2; call++) {
    let result: GenerateResult
    try {
      const assembler = new ContentAssembler()
      for await (const chunk of ctx.llm.stream(sent)) assembler.push(chunk)
      result = assembler.result()
    } catch (error) {
      if (request.signal?.aborted || (LlmError.isInstance(error) && error.code === 'ABORTED')) {
        throw new CompactionRefusal('cancelled', `summary call aborted: ${describe(request.signal?.reason ?? error)}`, { cause: error })
      }
      // The cache ledger's guard refused the call before it was sent: its reason is the refusal's.
      if (CacheGuardError.isInstance(error)) throw new CompactionRefusal('summary', `the cache guard refused the summary call: ${error.reason}`, { cause: error })
      const llmCode = LlmError.isInstance(error) ? error.code : undefined
      throw new CompactionRefusal('summary', `summary call failed${llmCode ? ` (${llmCode})` : ''}: ${describe(error)}`, { cause: error, llmCode })
    }
    if (result.finishReason === 'max-tokens') {
      throw new CompactionRefusal('summary', `summary truncated at maxTokens ${sent.maxTokens ?? '(adapter default)'}; an incomplete checkpoint is not committed`)
    }
    if (result.content.some((block) => block.type === 'tool-call')) {
      if (call === 1) continue
      throw new CompactionRefusal('summary', 'summary call answered with a tool call twice; no checkpoint was committed')
    }
    const text = result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('').trim()
    if (!text) throw new CompactionRefusal('summary', `summary call returned no text (finish reason ${result.finishReason})`)
    return { text, sent, result, calls: call }
  }
  throw new Error('unreachable')
}

function describe(value: unknown): string {
  return value instanceof Error ? value.message : String(value)
}
