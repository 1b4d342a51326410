import { describe, expect, it } from 'vitest'
import type { CacheReadFacts } from '../../src/prefix/index.ts'
import { DEFAULT_PROVIDER_TOLERANCE_TOKENS, expectedCacheTokens, providerMissed } from '../../src/prefix/index.ts'

/** A 40,000-character prompt the provider counts as 10,000 tokens, of which 38,000 characters were expected cached. */
const facts = (cachedTokens: number | undefined, promptTokens: number | undefined = 10_000): CacheReadFacts => ({
  expectedChars: 38_000,
  promptChars: 40_000,
  promptTokens,
  cachedTokens,
})

describe('providerMissed: the tolerance rule the ledger and the AI SDK bridge share', () => {
  it('converts the expected characters at the request’s own ratio of reported tokens to characters', () => {
    expect(expectedCacheTokens(facts(0))).toBe(9_500)
    expect(expectedCacheTokens(facts(undefined))).toBeUndefined()
    expect(expectedCacheTokens(facts(10, 0))).toBeUndefined()
    expect(expectedCacheTokens({ ...facts(10), promptChars: 0 })).toBeUndefined()
  })

  it('blames the provider only past the tolerance and past 5 % of the expected prefix', () => {
    const tolerance = DEFAULT_PROVIDER_TOLERANCE_TOKENS
    expect(tolerance).toBe(1024)
    // 151 of 9,500: a miss (what the bridge used to call warm because it was not 0).
    expect(providerMissed(facts(151), tolerance)).toBe(true)
    expect(providerMissed(facts(0), tolerance)).toBe(true)
    // Short by exactly the tolerance: within it; one token more: a miss.
    expect(providerMissed(facts(9_500 - 1_024), tolerance)).toBe(false)
    expect(providerMissed(facts(9_500 - 1_025), tolerance)).toBe(true)
    // 5 % binds above the tolerance: 5 % of 9,500 is 475, so with a 100-token tolerance 475 short still holds.
    expect(providerMissed(facts(9_500 - 475), 100)).toBe(false)
    expect(providerMissed(facts(9_500 - 476), 100)).toBe(true)
    // Nothing reported, nothing blamed.
    expect(providerMissed(facts(undefined), tolerance)).toBe(false)
    expect(providerMissed({ ...facts(0), promptTokens: undefined }, tolerance)).toBe(false)
  })
})
