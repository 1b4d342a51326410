import type { TokenUsage } from '@warmfold/llm'

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
  const outputDetails = details(raw.output_tokens_details)
  const total = count(raw.input_tokens)
  const cacheReadTokens = count(inputDetails?.cached_tokens)
  const cacheWriteTokens = count(inputDetails?.cache_write_tokens)
  const outputTokens = count(raw.output_tokens)
  const reasoningTokens = count(outputDetails?.reasoning_tokens)
  const inputTokens =
    total === undefined ? undefined : Math.max(0, total - (cacheReadTokens ?? 0) - (cacheWriteTokens ?? 0))
  return {
    ...(inputTokens === undefined ? {} : { inputTokens }),
    ...(cacheReadTokens === undefined ? {} : { cacheReadTokens }),
    ...(cacheWriteTokens === undefined ? {} : { cacheWriteTokens }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
    ...(reasoningTokens === undefined ? {} : { reasoningTokens }),
    raw,
  }
}

function details(value: unknown): ResponsesUsage | undefined {
  return typeof value === 'object' && value !== null ? (value as ResponsesUsage) : undefined
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}
