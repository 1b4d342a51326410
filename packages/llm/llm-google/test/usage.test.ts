import { describe, expect, it } from 'vitest'
import { mapUsage } from '../src/map-usage.ts'

describe('usage mapping', () => {
  it('splits the prompt into cached and uncached, and adds thoughts to the output', () => {
    const raw = {
      promptTokenCount: 5000,
      cachedContentTokenCount: 4096,
      candidatesTokenCount: 120,
      thoughtsTokenCount: 300,
      totalTokenCount: 5420,
    }
    expect(mapUsage(raw)).toEqual({
      inputTokens: 904,
      cacheReadTokens: 4096,
      outputTokens: 420,
      reasoningTokens: 300,
      raw,
    })
  })

  it('leaves absent fields undefined (absent is not 0) and keeps raw', () => {
    const raw = { promptTokenCount: 50, candidatesTokenCount: 7, totalTokenCount: 57 }
    const usage = mapUsage(raw)!
    expect(usage).toEqual({ inputTokens: 50, outputTokens: 7, raw })
    expect('cacheReadTokens' in usage).toBe(false)
    expect('reasoningTokens' in usage).toBe(false)
    expect('cacheWriteTokens' in usage).toBe(false)
    expect(mapUsage({ cachedContentTokenCount: 0, promptTokenCount: 10 })).toMatchObject({
      cacheReadTokens: 0,
      inputTokens: 10,
    })
    expect(mapUsage({ totalTokenCount: 3 })).toEqual({ raw: { totalTokenCount: 3 } })
    expect(mapUsage({ promptTokenCount: -1, candidatesTokenCount: 'x' })).toEqual({
      raw: { promptTokenCount: -1, candidatesTokenCount: 'x' },
    })
    expect(mapUsage(undefined)).toBeUndefined()
  })
})
