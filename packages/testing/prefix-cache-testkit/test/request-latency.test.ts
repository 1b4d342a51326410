import { describe, expect, it } from 'vitest'
import type { LatencyProfile } from '../src/index.ts'
import { LATENCY_PROFILES, latencyProfileFromJson, requestLatency } from '../src/index.ts'
import { requestLatencyMs } from '../src/request-latency.ts'

// Round figures, so every expected value below is arithmetic a reader can check.
const profile: LatencyProfile = latencyProfileFromJson(
  { ttftMs: 100, prefillTokensPerSecond: 1000, cachedTokensPerSecond: 10_000, decodeTokensPerSecond: 10 },
  'round.json',
)

describe('requestLatency', () => {
  it('is ttft + uncached / prefill + cached / read + output / decode, in milliseconds', () => {
    // 100 ms + 500 / 1,000 s + 20,000 / 10,000 s + 30 / 10 s = 0.1 + 0.5 + 2 + 3 s.
    expect(requestLatency({ uncachedTokens: 500, cachedTokens: 20_000, outputTokens: 30 }, profile)).toEqual({
      firstTokenMs: 2600,
      decodeMs: 3000,
      totalMs: 5600,
    })
    expect(requestLatencyMs({ uncachedTokens: 500, cachedTokens: 20_000, outputTokens: 30 }, profile)).toBe(5600)
  })

  it('an empty request costs the fixed time to first token, and each term grows linearly with its own tokens only', () => {
    expect(requestLatencyMs({ uncachedTokens: 0, cachedTokens: 0, outputTokens: 0 }, profile)).toBe(100)
    expect(requestLatencyMs({ uncachedTokens: 1000, cachedTokens: 0, outputTokens: 0 }, profile)).toBe(1100)
    expect(requestLatencyMs({ uncachedTokens: 0, cachedTokens: 1000, outputTokens: 0 }, profile)).toBe(200)
    expect(requestLatencyMs({ uncachedTokens: 0, cachedTokens: 0, outputTokens: 1 }, profile)).toBe(200)
  })

  it.each([
    [
      { uncachedTokens: -1, cachedTokens: 0, outputTokens: 0 },
      'requestLatency: uncachedTokens must be a finite number ≥ 0, got -1',
    ],
    [
      { uncachedTokens: 0, cachedTokens: Number.NaN, outputTokens: 0 },
      'requestLatency: cachedTokens must be a finite number ≥ 0, got NaN',
    ],
    [
      { uncachedTokens: 0, cachedTokens: 0, outputTokens: Number.POSITIVE_INFINITY },
      'requestLatency: outputTokens must be a finite number ≥ 0, got Infinity',
    ],
  ])('refuses %j naming the count', (tokens, message) => {
    expect(() => requestLatency(tokens, profile)).toThrow(RangeError)
    expect(() => requestLatency(tokens, profile)).toThrow(message)
  })

  // The README's "what one fold takes" table: a summary call over a 150,000-token prefix that
  // writes a 3,000-token checkpoint, warm (the prefix read from the cache, a 400-token
  // instruction prefilled) or cold (all 150,400 prompt tokens prefilled). Hand-computed:
  it.each([
    // ttft + 400 / prefill + 150,000 / read + 3,000 / decode           ttft + 150,400 / prefill + 3,000 / decode
    ['sonnet-class', 1000 + 8 + 300 + 37_500, 1000 + 3008 + 37_500],
    ['opus-class', 2000 + 16 + 600 + 75_000, 2000 + 6016 + 75_000],
    ['llama-cpp-local', 50 + 400 + 1875 + 3_000_000 / 37, 50 + 150_400 + 3_000_000 / 37],
  ] as const)('%s: a 150k-token fold with a 3,000-token summary, warm and cold', (name, warm, cold) => {
    const latency = LATENCY_PROFILES[name]
    expect(requestLatencyMs({ uncachedTokens: 400, cachedTokens: 150_000, outputTokens: 3000 }, latency)).toBeCloseTo(
      warm,
      6,
    )
    expect(requestLatencyMs({ uncachedTokens: 150_400, cachedTokens: 0, outputTokens: 3000 }, latency)).toBeCloseTo(
      cold,
      6,
    )
  })
})
