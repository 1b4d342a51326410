import type { TokenUsage } from '@warmfold/llm'
import { tokenCount, tokenUsage } from '@warmfold/llm/adapter'
import type { Dialect } from './config.ts'

/**
 * A chat completions `usage` object as the OpenAI-compatible servers send it: the OpenAI fields
 * plus DeepSeek's `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`. Every field may be
 * missing.
 */
export interface ChatUsage {
  readonly prompt_tokens?: number
  readonly completion_tokens?: number
  readonly total_tokens?: number
  readonly prompt_tokens_details?: {
    readonly cached_tokens?: number
    readonly cache_write_tokens?: number
    readonly [key: string]: unknown
  } | null
  readonly completion_tokens_details?: { readonly reasoning_tokens?: number; readonly [key: string]: unknown } | null
  readonly prompt_cache_hit_tokens?: number
  readonly prompt_cache_miss_tokens?: number
  readonly cache_write_tokens?: number
  readonly [key: string]: unknown
}

/** llama.cpp's `timings` object: `cache_n` prompt tokens reused, `prompt_n` newly processed. */
export interface LlamaTimings {
  readonly cache_n?: number
  readonly prompt_n?: number
  readonly [key: string]: unknown
}

/**
 * Maps a server's usage into disjoint {@link TokenUsage} buckets. A field the server did not
 * report stays `undefined` (never 0). Precedence, first match wins:
 *
 * 1. llama.cpp `timings`: `cacheRead = cache_n`, `input = prompt_n`.
 * 2. DeepSeek: `cacheRead = prompt_cache_hit_tokens`, `input = prompt_cache_miss_tokens`; no writes.
 * 3. OpenAI shape: `cacheRead = prompt_tokens_details.cached_tokens`, `cacheWrite =
 *    prompt_tokens_details.cache_write_tokens` (or a top-level `cache_write_tokens`; not read for
 *    `llamacpp` or `deepseek`, which have no cache writes), `input = prompt_tokens − read − write`.
 *    Without a cached count (vLLM without `--enable-prompt-tokens-details`) every prompt token
 *    is `input` and `cacheReadTokens` stays undefined: unknown, not 0.
 *
 * `outputTokens = completion_tokens`, `reasoningTokens = completion_tokens_details.reasoning_tokens`.
 * `raw` is the usage object as received; when `timings` came with it, a shallow copy with
 * `timings` added (nothing removed).
 */
export function mapUsage(
  usage: ChatUsage | undefined,
  timings: LlamaTimings | undefined,
  dialect: Dialect,
): TokenUsage {
  const prompt = tokenCount(usage?.prompt_tokens)
  const cacheN = tokenCount(timings?.cache_n)
  const promptN = tokenCount(timings?.prompt_n)
  const hit = tokenCount(usage?.prompt_cache_hit_tokens)
  const miss = tokenCount(usage?.prompt_cache_miss_tokens)
  let inputTokens: number | undefined
  let cacheReadTokens: number | undefined
  let cacheWriteTokens: number | undefined
  if (cacheN !== undefined || promptN !== undefined) {
    cacheReadTokens = cacheN
    inputTokens = promptN ?? difference(prompt, cacheN)
  } else if (hit !== undefined || miss !== undefined) {
    cacheReadTokens = hit
    inputTokens = miss ?? difference(prompt, hit)
  } else {
    cacheReadTokens = tokenCount(usage?.prompt_tokens_details?.cached_tokens)
    if (dialect !== 'llamacpp' && dialect !== 'deepseek') {
      cacheWriteTokens =
        tokenCount(usage?.prompt_tokens_details?.cache_write_tokens) ?? tokenCount(usage?.cache_write_tokens)
    }
    inputTokens =
      prompt === undefined ? undefined : Math.max(0, prompt - (cacheReadTokens ?? 0) - (cacheWriteTokens ?? 0))
  }
  return tokenUsage(
    {
      inputTokens,
      cacheReadTokens,
      cacheWriteTokens,
      outputTokens: usage?.completion_tokens,
      reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens,
    },
    timings === undefined ? usage : { ...usage, timings },
  )
}

function difference(total: number | undefined, part: number | undefined): number | undefined {
  return total === undefined || part === undefined ? undefined : Math.max(0, total - part)
}
