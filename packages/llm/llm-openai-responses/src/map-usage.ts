import type { TokenUsage } from '@warmfold/llm'
import { tokenCount, tokenUsage } from '@warmfold/llm/adapter'

/** A Responses `usage` object as received; every field may be missing. */
export type ResponsesUsage = { readonly [field: string]: unknown }

/**
 * Maps a Responses `usage` to disjoint {@link TokenUsage} buckets:
 * `input_tokens_details.cached_tokens` → `cacheReadTokens`, `input_tokens_details.cache_write_tokens`
 * → `cacheWriteTokens`, `inputTokens` = `input_tokens` − read − write (the uncached rest; both are
 * parts of `input_tokens`), `output_tokens` → `outputTokens`, `output_tokens_details.reasoning_tokens`
 * → `reasoningTokens`. A field that is absent, `null` or not a count stays `undefined`; without a
 * cached count every input token is `inputTokens` and `cacheReadTokens` stays unknown. `raw` is
 * the object as received. Returns `undefined` without a usage object.
 */
export function mapUsage(raw: ResponsesUsage | null | undefined): TokenUsage | undefined {
  if (raw === null || raw === undefined || typeof raw !== 'object') return undefined
  const inputDetails = details(raw.input_tokens_details)
  const total = tokenCount(raw.input_tokens)
  const cacheReadTokens = tokenCount(inputDetails?.cached_tokens)
  const cacheWriteTokens = tokenCount(inputDetails?.cache_write_tokens)
  return tokenUsage(
    {
      inputTokens:
        total === undefined ? undefined : Math.max(0, total - (cacheReadTokens ?? 0) - (cacheWriteTokens ?? 0)),
      cacheReadTokens,
      cacheWriteTokens,
      outputTokens: raw.output_tokens,
      reasoningTokens: details(raw.output_tokens_details)?.reasoning_tokens,
    },
    raw,
  )
}

function details(value: unknown): ResponsesUsage | undefined {
  return typeof value === 'object' && value !== null ? (value as ResponsesUsage) : undefined
}
