import { describe, expect, it } from 'vitest'
import { mapUsage } from '../src/map-usage.ts'

describe('mapUsage', () => {
  it('splits input_tokens into disjoint uncached, cache-read and cache-write buckets and keeps raw', () => {
    const raw = {
      input_tokens: 5000,
      input_tokens_details: { cached_tokens: 3072, cache_write_tokens: 1024 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 200 },
      total_tokens: 5300,
    }
    expect(mapUsage(raw)).toEqual({
      inputTokens: 904,
      cacheReadTokens: 3072,
      cacheWriteTokens: 1024,
      outputTokens: 300,
      reasoningTokens: 200,
      raw,
    })
  })

  it('keeps absent fields undefined, never 0', () => {
    const raw = { input_tokens: 120, output_tokens: 7 }
    const usage = mapUsage(raw)!
    expect(usage).toEqual({ inputTokens: 120, outputTokens: 7, raw })
    expect('cacheReadTokens' in usage).toBe(false)
    expect('cacheWriteTokens' in usage).toBe(false)
    expect(mapUsage({ input_tokens_details: { cached_tokens: 0 } })).toEqual({
      cacheReadTokens: 0,
      raw: { input_tokens_details: { cached_tokens: 0 } },
    })
    expect(mapUsage({ input_tokens: null, output_tokens: 'x' })).toEqual({
      raw: { input_tokens: null, output_tokens: 'x' },
    })
    expect(mapUsage(null)).toBeUndefined()
  })
})
