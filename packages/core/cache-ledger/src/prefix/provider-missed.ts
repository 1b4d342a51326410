/**
 * The default of how far a provider's cached tokens may fall short of the expected prefix before
 * it is blamed: providers cache in blocks and behind minimum lengths (OpenAI 1,024 tokens, then
 * 128-token steps; DeepSeek 64-token units).
 */
export const DEFAULT_PROVIDER_TOLERANCE_TOKENS = 1024

/** What a provider reported reading from its cache, against the prefix it could have read. */
export interface CacheReadFacts {
  /** Characters of the prompt's prefix the provider could have read (what an earlier live request wrote). */
  readonly expectedChars: number
  /** Characters of the whole prompt, counted as `expectedChars` is (`RequestFingerprint.chars`). */
  readonly promptChars: number
  /** The prompt's tokens as the provider reported them: every bucket (uncached, read, written). */
  readonly promptTokens: number | undefined
  /** The tokens the provider reported reading from its cache. */
  readonly cachedTokens: number | undefined
}

/**
 * The expected prefix in the provider's tokens: `expectedChars` at the request's own ratio of
 * reported prompt tokens to characters. `undefined` when the provider reported no prompt or no
 * cached tokens (nothing to compare).
 */
export function expectedCacheTokens(facts: CacheReadFacts): number | undefined {
  const { promptTokens, cachedTokens, promptChars } = facts
  if (cachedTokens === undefined || !promptTokens || promptChars <= 0) return undefined
  return (facts.expectedChars * promptTokens) / promptChars
}

/**
 * Whether the provider reported clearly fewer cached tokens than the prompt made possible: the
 * expected prefix ({@link expectedCacheTokens}) exceeds the cached tokens by more than
 * `toleranceTokens` and by more than 5 %. False when the provider reported no prompt or cached
 * tokens. The one rule the cache ledger (cause `provider`) and the AI SDK bridge (a cold fold)
 * apply.
 */
export function providerMissed(facts: CacheReadFacts, toleranceTokens: number): boolean {
  const expected = expectedCacheTokens(facts)
  if (expected === undefined) return false
  return expected - (facts.cachedTokens as number) > Math.max(toleranceTokens, 0.05 * expected)
}
