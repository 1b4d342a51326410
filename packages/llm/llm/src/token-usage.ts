/**
 * What a provider reported for one call, in disjoint buckets. A field the provider did not
 * report stays `undefined`; it is never guessed as 0, because 0 cached tokens and "the
 * provider does not say" mean different things.
 */
export interface TokenUsage {
  /** Prompt tokens billed at the full (uncached) input price. */
  readonly inputTokens?: number
  /** Prompt tokens read from the provider's prefix cache. */
  readonly cacheReadTokens?: number
  /** Prompt tokens written to the provider's cache (Anthropic, some OpenAI models). */
  readonly cacheWriteTokens?: number
  /** Generated tokens, reasoning included. */
  readonly outputTokens?: number
  /** The part of `outputTokens` spent on reasoning. */
  readonly reasoningTokens?: number
  /** The provider's usage object exactly as received, for diagnosis. */
  readonly raw?: unknown
}

/**
 * Total prompt tokens (uncached + cache read + cache write), or `undefined` when the provider
 * reported none of the three.
 */
export function promptTokensOf(usage: TokenUsage): number | undefined {
  const parts = [usage.inputTokens, usage.cacheReadTokens, usage.cacheWriteTokens]
  if (parts.every((part) => part === undefined)) return undefined
  return parts.reduce<number>((sum, part) => sum + (part ?? 0), 0)
}

/** The buckets of a {@link TokenUsage} that count tokens, in the contract's order. */
const BUCKETS = ['inputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'outputTokens', 'reasoningTokens'] as const

/** A token count as a provider reported it: a finite number ≥ 0, else `undefined` (not reported). */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}

/**
 * The usage an adapter reports: each bucket of `counts` that is a {@link tokenCount} (any other
 * value leaves the bucket out, never 0), in the contract's order, then `raw` when there is one.
 */
export function tokenUsage(
  counts: { readonly [bucket in (typeof BUCKETS)[number]]?: unknown },
  raw: unknown,
): TokenUsage {
  const usage: Record<string, unknown> = {}
  for (const bucket of BUCKETS) {
    const count = tokenCount(counts[bucket])
    if (count !== undefined) usage[bucket] = count
  }
  if (raw !== undefined) usage.raw = raw
  return usage as TokenUsage
}
