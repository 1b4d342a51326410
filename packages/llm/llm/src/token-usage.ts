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
