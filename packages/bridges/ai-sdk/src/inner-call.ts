import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FinishReason,
  LanguageModelV3Usage,
} from '@ai-sdk/provider'
import type { ContentBlock, FinishReason, GenerateResult, TokenUsage } from '@warmfold/llm'

/**
 * One call to the inner model, collected: what the engine's summary loop reads (content, finish
 * reason, usage in warmfold's buckets), and what the provider was sent and reported.
 */
export interface InnerResult {
  readonly result: GenerateResult
  readonly usage?: LanguageModelV3Usage
  /** The request body the provider received, as the AI SDK reports it. */
  readonly requestBody?: unknown
}

/**
 * Calls the inner model the way the conversation called it (`generate` or `stream`), so the
 * summary request's body differs from the conversation's only by what the summary adds: a
 * streamed conversation's provider body carries `stream: true`, and a summary call sent
 * without it would not be the same request.
 */
export async function callInner(
  model: LanguageModelV3,
  type: 'generate' | 'stream',
  params: LanguageModelV3CallOptions,
): Promise<InnerResult> {
  if (type === 'generate') {
    const answer = await model.doGenerate(params)
    const content: ContentBlock[] = []
    for (const part of answer.content) {
      if (part.type === 'text') content.push({ type: 'text', text: part.text })
      else if (part.type === 'reasoning') content.push({ type: 'reasoning', text: part.text })
      else if (part.type === 'tool-call')
        content.push({ type: 'tool-call', id: part.toolCallId, name: part.toolName, arguments: part.input })
    }
    const usage = warmfoldUsage(answer.usage)
    return {
      result: { content, finishReason: finishReason(answer.finishReason), ...(usage ? { usage } : {}) },
      usage: answer.usage,
      requestBody: answer.request?.body,
    }
  }
  const answer = await model.doStream(params)
  let text = ''
  let reasoning = ''
  const calls: ContentBlock[] = []
  let finish: FinishReason = 'error'
  let usage: LanguageModelV3Usage | undefined
  const reader = answer.stream.getReader()
  for (;;) {
    const { done, value: part } = await reader.read()
    if (done) break
    if (part.type === 'text-delta') text += part.delta
    else if (part.type === 'reasoning-delta') reasoning += part.delta
    else if (part.type === 'tool-call')
      calls.push({ type: 'tool-call', id: part.toolCallId, name: part.toolName, arguments: part.input })
    else if (part.type === 'error')
      throw part.error instanceof Error
        ? part.error
        : new Error(`the summary stream failed: ${JSON.stringify(part.error)}`)
    else if (part.type === 'finish') {
      finish = finishReason(part.finishReason)
      usage = part.usage
    }
  }
  const content: ContentBlock[] = [
    ...(reasoning ? [{ type: 'reasoning' as const, text: reasoning }] : []),
    ...(text ? [{ type: 'text' as const, text }] : []),
    ...calls,
  ]
  const tokens = warmfoldUsage(usage)
  const result = { content, finishReason: finish, ...(tokens ? { usage: tokens } : {}) }
  return { result, ...(usage ? { usage } : {}), requestBody: answer.request?.body }
}

/** The AI SDK's unified finish reasons in warmfold's words. */
const FINISH_REASONS = new Map<string, FinishReason>([
  ['stop', 'stop'],
  ['length', 'max-tokens'],
  ['tool-calls', 'tool-calls'],
  ['content-filter', 'content-filter'],
])

/** The AI SDK's unified finish reason in warmfold's words (`other` is not a summary's normal end). */
function finishReason(reason: LanguageModelV3FinishReason): FinishReason {
  return FINISH_REASONS.get(reason.unified) ?? 'error'
}

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
