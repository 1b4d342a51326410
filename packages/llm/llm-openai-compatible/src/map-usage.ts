import type { TokenUsage } from '@warmfold/llm'
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
  const prompt = count(usage?.prompt_tokens)
  const cacheN = count(timings?.cache_n)
  const promptN = count(timings?.prompt_n)
  const hit = count(usage?.prompt_cache_hit_tokens)
  const miss = count(usage?.prompt_cache_miss_tokens)
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
    cacheReadTokens = count(usage?.prompt_tokens_details?.cached_tokens)
    if (dialect !== 'llamacpp' && dialect !== 'deepseek') {
      cacheWriteTokens = count(usage?.prompt_tokens_details?.cache_write_tokens) ?? count(usage?.cache_write_tokens)
    }
    inputTokens =
      prompt === undefined ? undefined : Math.max(0, prompt - (cacheReadTokens ?? 0) - (cacheWriteTokens ?? 0))
  }
  const mapped: { -readonly [K in keyof TokenUsage]: TokenUsage[K] } = {}
  if (inputTokens !== undefined) mapped.inputTokens = inputTokens
  if (cacheReadTokens !== undefined) mapped.cacheReadTokens = cacheReadTokens
  if (cacheWriteTokens !== undefined) mapped.cacheWriteTokens = cacheWriteTokens
  const output = count(usage?.completion_tokens)
  if (output !== undefined) mapped.outputTokens = output
  const reasoning = count(usage?.completion_tokens_details?.reasoning_tokens)
  if (reasoning !== undefined) mapped.reasoningTokens = reasoning
  mapped.raw = timings === undefined ? usage : { ...usage, timings }
  return mapped
}

function difference(total: number | undefined, part: number | undefined): number | undefined {
  return total === undefined || part === undefined ? undefined : Math.max(0, total - part)
}

/** A token count: a finite number ≥ 0, else undefined (a malformed field is "not reported"). */
function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}
