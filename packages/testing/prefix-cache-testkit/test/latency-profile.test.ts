import { describe, expect, it } from 'vitest'
import { builtinLatencyProfile, LATENCY_PROFILES, LATENCY_SYNTAX, latencyProfileFromJson } from '../src/index.ts'
import { requestLatencyMs } from '../src/request-latency.ts'

/** Within `share` of `expected`. */
function expectWithin(actual: number, expected: number, share: number): void {
  expect(Math.abs(actual / expected - 1)).toBeLessThanOrEqual(share)
}

describe('built-in latency profiles', () => {
  it('has the three named profiles with their figures', () => {
    expect(LATENCY_PROFILES).toEqual({
      'sonnet-class': {
        name: 'sonnet-class',
        ttftMs: 1000,
        prefillTokensPerSecond: 50_000,
        cachedTokensPerSecond: 500_000,
        decodeTokensPerSecond: 80,
      },
      'opus-class': {
        name: 'opus-class',
        ttftMs: 2000,
        prefillTokensPerSecond: 25_000,
        cachedTokensPerSecond: 250_000,
        decodeTokensPerSecond: 40,
      },
      'llama-cpp-local': {
        name: 'llama-cpp-local',
        ttftMs: 50,
        prefillTokensPerSecond: 1000,
        cachedTokensPerSecond: 80_000,
        decodeTokensPerSecond: 37,
      },
    })
    expect(builtinLatencyProfile('opus-class')).toBe(LATENCY_PROFILES['opus-class'])
    expect(builtinLatencyProfile('toString')).toBeUndefined()
    expect(builtinLatencyProfile('gpt-class')).toBeUndefined()
    expect(LATENCY_SYNTAX).toBe('sonnet-class | opus-class | llama-cpp-local | a JSON file')
  })

  // The measurements each profile was derived from: the model must give them back (rounding
  // the figures costs a few percent).
  it('sonnet-class gives back Anthropic cookbook timings of claude-sonnet-4-6 (187,364 prompt tokens, 8 output tokens)', () => {
    const profile = LATENCY_PROFILES['sonnet-class']
    expectWithin(requestLatencyMs({ uncachedTokens: 187_364, cachedTokens: 0, outputTokens: 8 }, profile), 4890, 0.02) // no caching: 4.89 s
    expectWithin(requestLatencyMs({ uncachedTokens: 3, cachedTokens: 187_361, outputTokens: 8 }, profile), 1480, 0.02) // read from the cache: 1.48 s
  })

  it('llama-cpp-local gives back the llama.cpp measurements it was derived from', () => {
    const profile = LATENCY_PROFILES['llama-cpp-local']
    // llama-server's print_timing for Qwen 3.6 27B: 18,432 prompt tokens in 18.80 s.
    expectWithin(requestLatencyMs({ uncachedTokens: 18_432, cachedTokens: 0, outputTokens: 0 }, profile), 18_800, 0.03)
    // Qwen3.6-27B on llama.cpp: 4,790 output tokens in 130.29 s.
    expectWithin(requestLatencyMs({ uncachedTokens: 0, cachedTokens: 0, outputTokens: 4790 }, profile), 130_290, 0.01)
    // A 200k-token prompt reused (llama.cpp engine under ollama): 2.5 s to first token.
    expectWithin(requestLatencyMs({ uncachedTokens: 0, cachedTokens: 200_000, outputTokens: 0 }, profile), 2500, 0.03)
  })

  it('opus-class is sonnet-class at half the speed (decode 80 → 40 tok/s), the assumption its README row states', () => {
    const sonnet = LATENCY_PROFILES['sonnet-class']
    const opus = LATENCY_PROFILES['opus-class']
    expect(opus.ttftMs).toBe(sonnet.ttftMs * 2)
    expect(opus.prefillTokensPerSecond).toBe(sonnet.prefillTokensPerSecond / 2)
    expect(opus.cachedTokensPerSecond).toBe(sonnet.cachedTokensPerSecond / 2)
    expect(opus.decodeTokensPerSecond).toBe(sonnet.decodeTokensPerSecond / 2)
  })

  it('every built-in profile is frozen and passes its own JSON validation', () => {
    for (const profile of Object.values(LATENCY_PROFILES)) {
      expect(Object.isFrozen(profile)).toBe(true)
      const { name, ...figures } = profile
      expect(latencyProfileFromJson(figures, name)).toEqual(profile)
    }
  })
})

describe('latencyProfileFromJson', () => {
  const good = { ttftMs: 300, prefillTokensPerSecond: 4000, cachedTokensPerSecond: 60_000, decodeTokensPerSecond: 55 }

  it('takes the four figures and names the profile after its source', () => {
    expect(latencyProfileFromJson(good, 'my-provider.json')).toEqual({ name: 'my-provider.json', ...good })
    expect(Object.isFrozen(latencyProfileFromJson(good, 'p.json'))).toBe(true)
    // The bounds themselves are accepted: no fixed overhead, the slowest and the fastest rates.
    expect(
      latencyProfileFromJson(
        { ...good, ttftMs: 0, decodeTokensPerSecond: 0.01, cachedTokensPerSecond: 100_000_000 },
        'p.json',
      ),
    ).toMatchObject({ ttftMs: 0, decodeTokensPerSecond: 0.01, cachedTokensPerSecond: 100_000_000 })
  })

  const rate = 'a finite number of tokens per second from 0.01 to 100000000'
  it.each([
    [
      [1],
      'latency profile p.json must be a JSON object with the keys ttftMs, prefillTokensPerSecond, cachedTokensPerSecond, decodeTokensPerSecond, got an array',
    ],
    [
      null,
      'latency profile p.json must be a JSON object with the keys ttftMs, prefillTokensPerSecond, cachedTokensPerSecond, decodeTokensPerSecond, got null',
    ],
    [
      'fast',
      'latency profile p.json must be a JSON object with the keys ttftMs, prefillTokensPerSecond, cachedTokensPerSecond, decodeTokensPerSecond, got "fast"',
    ],
    [
      { ...good, ttft: 300 },
      'latency profile p.json has unknown key(s) "ttft"; the keys are ttftMs, prefillTokensPerSecond, cachedTokensPerSecond, decodeTokensPerSecond',
    ],
    [
      { ttftMs: 300, prefillTokensPerSecond: 4000, cachedTokensPerSecond: 60_000 },
      'latency profile p.json is missing "decodeTokensPerSecond" (output tokens generated per second)',
    ],
    [{ ...good, decodeTokensPerSecond: 0 }, `latency profile p.json: "decodeTokensPerSecond" must be ${rate}, got 0`],
    [
      { ...good, prefillTokensPerSecond: -4000 },
      `latency profile p.json: "prefillTokensPerSecond" must be ${rate}, got -4000`,
    ],
    [
      { ...good, cachedTokensPerSecond: 1e308 },
      `latency profile p.json: "cachedTokensPerSecond" must be ${rate}, got 1e+308`,
    ],
    [
      { ...good, cachedTokensPerSecond: Number.POSITIVE_INFINITY },
      `latency profile p.json: "cachedTokensPerSecond" must be ${rate}, got Infinity`,
    ],
    [
      { ...good, decodeTokensPerSecond: Number.NaN },
      `latency profile p.json: "decodeTokensPerSecond" must be ${rate}, got NaN`,
    ],
    [
      { ...good, decodeTokensPerSecond: 1e-300 },
      `latency profile p.json: "decodeTokensPerSecond" must be ${rate}, got 1e-300`,
    ],
    [
      { ...good, decodeTokensPerSecond: '55' },
      `latency profile p.json: "decodeTokensPerSecond" must be ${rate}, got "55"`,
    ],
    [
      { ...good, ttftMs: -1 },
      'latency profile p.json: "ttftMs" must be a finite number of milliseconds from 0 to 3600000, got -1',
    ],
    [
      { ...good, ttftMs: 3_600_001 },
      'latency profile p.json: "ttftMs" must be a finite number of milliseconds from 0 to 3600000, got 3600001',
    ],
    [
      { ...good, ttftMs: null },
      'latency profile p.json: "ttftMs" must be a finite number of milliseconds from 0 to 3600000, got null',
    ],
  ])('%j is refused naming the source, the key and the value', (json, message) => {
    expect(() => latencyProfileFromJson(json, 'p.json')).toThrow(TypeError)
    expect(() => latencyProfileFromJson(json, 'p.json')).toThrow(message)
  })
})
