import type { TokenUsage } from '@warmfold/llm'
import { tokenUsage } from '@warmfold/llm/adapter'

/** A usage object as Anthropic sends it (`message_start.message.usage` or `message_delta.usage`). */
export type AnthropicUsage = { readonly [field: string]: unknown }

/**
 * Merges the usage of `message_start` with the one of `message_delta`. Every count in
 * `message_delta` is cumulative, so a field it reports (not `null`, not absent) replaces the
 * `message_start` value; a field it leaves out keeps that value. Returns `undefined` when neither
 * event carried usage.
 */
export function mergeUsage(
  start: AnthropicUsage | undefined,
  delta: AnthropicUsage | undefined,
): AnthropicUsage | undefined {
  if (!start && !delta) return undefined
  const merged: Record<string, unknown> = { ...start }
  for (const [field, value] of Object.entries(delta ?? {})) {
    if (value !== null && value !== undefined) merged[field] = value
  }
  return merged
}

/**
 * Maps Anthropic usage to disjoint {@link TokenUsage} buckets:
 * `cache_read_input_tokens` → `cacheReadTokens`, `cache_creation_input_tokens` →
 * `cacheWriteTokens` (5-minute and 1-hour writes together; the split stays in `raw.cache_creation`),
 * `input_tokens` → `inputTokens` (only the tokens after the last breakpoint, so the prompt total is
 * read + creation + input), `output_tokens` → `outputTokens`, and
 * `output_tokens_details.thinking_tokens` → `reasoningTokens`. A field that is absent, `null` or
 * not a finite count stays `undefined`. `raw` is the (merged) object as received.
 */
export function mapUsage(raw: AnthropicUsage | undefined): TokenUsage | undefined {
  if (!raw) return undefined
  const details = raw.output_tokens_details
  return tokenUsage(
    {
      inputTokens: raw.input_tokens,
      cacheReadTokens: raw.cache_read_input_tokens,
      cacheWriteTokens: raw.cache_creation_input_tokens,
      outputTokens: raw.output_tokens,
      reasoningTokens:
        typeof details === 'object' && details !== null ? (details as AnthropicUsage).thinking_tokens : undefined,
    },
    raw,
  )
}
