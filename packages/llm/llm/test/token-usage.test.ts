import { describe, expect, it } from 'vitest'
import { promptTokensOf } from '../src/index.ts'

describe('promptTokensOf', () => {
  it('is undefined when no prompt bucket is present', () => {
    expect(promptTokensOf({})).toBeUndefined()
    expect(promptTokensOf({ outputTokens: 10, reasoningTokens: 4, raw: { prompt_tokens: 99 } })).toBeUndefined()
  })

  it('sums the disjoint prompt buckets that are present, counting a reported 0', () => {
    expect(promptTokensOf({ inputTokens: 0 })).toBe(0)
    expect(promptTokensOf({ cacheReadTokens: 300 })).toBe(300)
    expect(promptTokensOf({ inputTokens: 12, cacheReadTokens: 300, cacheWriteTokens: 50, outputTokens: 1000 })).toBe(
      362,
    )
  })
})
