import type { LanguageModelV3Usage } from '@ai-sdk/provider'
import type { TokenUsage } from '@warmfold/llm'
import { tokenUsage } from '@warmfold/llm/adapter'

/**
 * Maps V3 usage to disjoint {@link TokenUsage} buckets: `inputTokens.noCache` → `inputTokens`,
 * `inputTokens.cacheRead` → `cacheReadTokens`, `inputTokens.cacheWrite` → `cacheWriteTokens`,
 * `outputTokens.total` → `outputTokens`, `outputTokens.reasoning` → `reasoningTokens`, and `raw`
 * (the provider's own usage object) kept. A field the provider leaves `undefined` stays undefined.
 *
 * Absent is not 0: both tested providers fill a cache count the server did not send with 0
 * (`@ai-sdk/openai-compatible` `convertOpenAICompatibleChatUsage`, `@ai-sdk/anthropic`
 * `convertAnthropicMessagesUsage`). Where `raw` has the shape of those servers' usage, the count
 * is taken as reported only when the server's own field is there:
 * chat completions `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens` /
 * `cache_creation_input_tokens`. Other providers' counts are taken as the provider gives them.
 */
export function mapUsage(usage: LanguageModelV3Usage | undefined): TokenUsage | undefined {
  if (!usage) return undefined
  const raw = usage.raw as Record<string, unknown> | undefined
  return tokenUsage(
    {
      inputTokens: usage.inputTokens?.noCache,
      cacheReadTokens: reported(raw, 'cacheRead') ? usage.inputTokens?.cacheRead : undefined,
      cacheWriteTokens: reported(raw, 'cacheWrite') ? usage.inputTokens?.cacheWrite : undefined,
      outputTokens: usage.outputTokens?.total,
      reasoningTokens: reported(raw, 'reasoning') ? usage.outputTokens?.reasoning : undefined,
    },
    raw,
  )
}

function reported(raw: Record<string, unknown> | undefined, field: 'cacheRead' | 'cacheWrite' | 'reasoning'): boolean {
  if (!raw) return true
  if ('prompt_tokens' in raw) {
    // Chat completions: cached_tokens inside prompt_tokens_details, reasoning_tokens inside completion_tokens_details.
    if (field === 'cacheRead') return has(raw.prompt_tokens_details, 'cached_tokens')
    if (field === 'reasoning') return has(raw.completion_tokens_details, 'reasoning_tokens')
    return true
  }
  if ('input_tokens' in raw && 'output_tokens' in raw && !('input_tokens_details' in raw)) {
    // Anthropic Messages.
    if (field === 'cacheRead') return has(raw, 'cache_read_input_tokens')
    if (field === 'cacheWrite') return has(raw, 'cache_creation_input_tokens')
  }
  return true
}

function has(value: unknown, key: string): boolean {
  return typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[key] === 'number'
}
