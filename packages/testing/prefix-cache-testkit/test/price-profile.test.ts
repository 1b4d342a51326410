import { describe, expect, it } from 'vitest'
import {
  builtinPriceProfile,
  costUsd,
  PRICE_PROFILES,
  priceProfileFromJson,
  requestCost,
  sumCosts,
} from '../src/index.ts'

describe('price profiles', () => {
  it('has the four published profiles as multipliers of an uncached input token', () => {
    expect(PRICE_PROFILES).toEqual({
      deepseek: { name: 'deepseek', cacheRead: 0.02, cacheWrite: 1, output: 4, usdPerMillionInput: 0.3 },
      openai: { name: 'openai', cacheRead: 0.1, cacheWrite: 1.25, output: 6, usdPerMillionInput: 2.5 },
      'anthropic-5m': { name: 'anthropic-5m', cacheRead: 0.1, cacheWrite: 1.25, output: 5, usdPerMillionInput: 2 },
      'anthropic-1h': { name: 'anthropic-1h', cacheRead: 0.1, cacheWrite: 2, output: 5, usdPerMillionInput: 2 },
    })
    expect(builtinPriceProfile('anthropic-5m')).toBe(PRICE_PROFILES['anthropic-5m'])
    expect(builtinPriceProfile('toString')).toBeUndefined()
    expect(builtinPriceProfile('gemini')).toBeUndefined()
  })

  // One request: 1,000 cached, 500 uncached of which 400 written, 100 output tokens.
  const tokens = { cachedTokens: 1000, uncachedTokens: 500, cacheWriteTokens: 400, outputTokens: 100 }
  it.each([
    // uncached-not-written 100 × 1 + reads 1000 × r + writes 400 × w + output 100 × o
    ['deepseek', { uncachedInput: 100, cacheRead: 20, cacheWrite: 400, output: 400, total: 920 }, 0.000276],
    ['openai', { uncachedInput: 100, cacheRead: 100, cacheWrite: 500, output: 600, total: 1300 }, 0.00325],
    ['anthropic-5m', { uncachedInput: 100, cacheRead: 100, cacheWrite: 500, output: 500, total: 1200 }, 0.0024],
    ['anthropic-1h', { uncachedInput: 100, cacheRead: 100, cacheWrite: 800, output: 500, total: 1500 }, 0.003],
  ] as const)('%s bills a hand-computed request', (name, expected, dollars) => {
    const cost = requestCost(tokens, PRICE_PROFILES[name])
    for (const [key, value] of Object.entries(expected)) expect(cost[key as keyof typeof cost]).toBeCloseTo(value, 9)
    expect(costUsd(cost, PRICE_PROFILES[name])).toBeCloseTo(dollars, 12)
  })

  it('sums costs part by part and has no dollars without a dollar rate', () => {
    const price = priceProfileFromJson({ cacheRead: 0.5, cacheWrite: 3, output: 2 }, 'custom.json')
    expect(price).toEqual({ name: 'custom.json', cacheRead: 0.5, cacheWrite: 3, output: 2, usdPerMillionInput: null })
    const first = requestCost({ cachedTokens: 10, uncachedTokens: 6, cacheWriteTokens: 2, outputTokens: 1 }, price) // 4 + 5 + 6 + 2 = 17
    const second = requestCost({ cachedTokens: 0, uncachedTokens: 3, cacheWriteTokens: 3, outputTokens: 0 }, price) // 0 + 0 + 9 + 0 = 9
    expect(sumCosts([first, second])).toEqual({ uncachedInput: 4, cacheRead: 5, cacheWrite: 15, output: 2, total: 26 })
    expect(costUsd(sumCosts([first, second]), price)).toBeNull()
  })

  it('refuses a write count outside 0..uncached', () => {
    expect(() =>
      requestCost({ cachedTokens: 0, uncachedTokens: 3, cacheWriteTokens: 4, outputTokens: 0 }, PRICE_PROFILES.openai),
    ).toThrow('requestCost: cacheWriteTokens must be from 0 to uncachedTokens (3), got 4')
  })

  it.each([
    [
      [1],
      'price profile p.json must be a JSON object with the keys cacheRead, cacheWrite, output, usdPerMillionInput, got an array',
    ],
    [
      'cheap',
      'price profile p.json must be a JSON object with the keys cacheRead, cacheWrite, output, usdPerMillionInput, got "cheap"',
    ],
    [
      { cacheRead: 0.1, cacheWrite: 1, output: 4, read: 1 },
      'price profile p.json has unknown key(s) "read"; the keys are cacheRead, cacheWrite, output, usdPerMillionInput',
    ],
    [{ cacheRead: 0.1, output: 4 }, 'price profile p.json is missing "cacheWrite"'],
    [
      { cacheRead: -0.1, cacheWrite: 1, output: 4 },
      'price profile p.json: "cacheRead" must be a finite number ≥ 0, got -0.1',
    ],
    [
      { cacheRead: 0.1, cacheWrite: '1.25', output: 4 },
      'price profile p.json: "cacheWrite" must be a finite number ≥ 0, got "1.25"',
    ],
    // A profile built in code can hold what JSON cannot: the message shows it, not JSON's null.
    [
      { cacheRead: Number.POSITIVE_INFINITY, cacheWrite: 1, output: 4 },
      'price profile p.json: "cacheRead" must be a finite number ≥ 0, got Infinity',
    ],
    [
      { cacheRead: 0.1, cacheWrite: 1, output: 4, usdPerMillionInput: 'two' },
      'price profile p.json: "usdPerMillionInput" must be a finite number ≥ 0 or null, got "two"',
    ],
  ])('a JSON profile %j is refused naming the file, the key and the value', (json, message) => {
    expect(() => priceProfileFromJson(json, 'p.json')).toThrow(TypeError)
    expect(() => priceProfileFromJson(json, 'p.json')).toThrow(message)
  })
})
