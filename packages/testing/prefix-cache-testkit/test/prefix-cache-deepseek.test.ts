import { createAssistantMessage, textBlock } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { PrefixCache, runWorkload } from '../src/index.ts'
import { promptText, request, ROUTE, userMessageOfChars } from './prefix-cache-fixture.ts'

// Each test cites the rule of DeepSeek's documentation it checks:
// [guide] https://api-docs.deepseek.com/guides/kv_cache ("Context Caching"), current revision:
//         "Cache Persistence and Hit Rules" (cache prefix units)
// [notes] the same page's "Additional Notes" (earlier revision): storage unit, best effort, clearing
// [news]  https://api-docs.deepseek.com/news/news0802 ("Context Caching is Available", 2024-08-02)

const HOUR = 3_600_000
/** A: 1100 characters (275 tokens); B, C, D, E: 500 characters each, different text. */
const A = userMessageOfChars(1100, 1)
const B = userMessageOfChars(500, 2)
const C = userMessageOfChars(500, 3)
const D = userMessageOfChars(500, 4)
const E = userMessageOfChars(500, 5)

/** Cached tokens of A + B, A + C, A + D on a fresh cache. */
function observeABCD(): number[] {
  const cache = new PrefixCache('deepseek')
  return [request([A, B]), request([A, C]), request([A, D])].map((prompt) => cache.observe(prompt).cachedTokens)
}

describe('profile deepseek (DeepSeek context caching on disk)', () => {
  it('[guide] "enabled by default": the profile needs no setting; [notes] unused cache is cleared "within a few hours to a few days", lower bound read as 3 hours', () => {
    expect(new PrefixCache('deepseek').profile).toEqual({
      kind: 'deepseek',
      name: 'deepseek',
      unitTokens: 64,
      ttlMs: 3 * HOUR,
    })
  })

  it.each([
    // prompt characters, whole tokens, tokens stored (whole 64-token storage units)
    [255, 63, 0],
    [256, 64, 64],
    [300, 75, 64],
    [1100, 275, 256],
  ])(
    '[notes] "64 tokens as a storage unit; content less than 64 tokens will not be cached": a prompt of %i characters (%i whole tokens) stores and then reads %i',
    (chars, whole, stored) => {
      const cache = new PrefixCache('deepseek')
      const prompt = request([userMessageOfChars(chars, 6)])
      expect(promptText(prompt).length).toBe(chars)
      expect(Math.floor(chars / 4)).toBe(whole)
      expect(cache.observe(prompt)).toMatchObject({ cachedTokens: 0, cacheWriteTokens: stored })
      expect(cache.observe(prompt)).toMatchObject({ cachedTokens: stored, cacheWriteTokens: 0 })
    },
  )

  it('[news] "only requests with identical prefixes (starting from the 0th token)": a repeat in the middle of the input is no hit', () => {
    const cache = new PrefixCache('deepseek')
    cache.observe(request([A, B]))
    const shifted = cache.observe(request([C, A, B]))
    expect(shifted.cachedTokens).toBe(0)
  })

  it('[guide] "Persistence at request boundaries" (end of the user input), example 1: A + B, then A + B + C hits A + B', () => {
    const cache = new PrefixCache('deepseek')
    // A + B: 1600 characters, 400 tokens, 6 storage units (384 tokens) persisted at the end of the input.
    expect(cache.observe(request([A, B]))).toMatchObject({ promptTokens: 400, cachedTokens: 0, cacheWriteTokens: 384 })
    // A + B + C: 2100 characters, 525 tokens; reads the A + B unit, stores 8 units (512 tokens).
    expect(cache.observe(request([A, B, C]))).toMatchObject({
      promptTokens: 525,
      cachedTokens: 384,
      uncachedTokens: 141,
      cacheWriteTokens: 128,
    })
  })

  it('[guide] "can only hit the cache if it fully matches a cache prefix unit" and "Common prefix detection persistence", example 2: A + B, A + C misses, A + D hits A', () => {
    const cache = new PrefixCache('deepseek')
    cache.observe(request([A, B]))
    // A + C shares A and the opening of its message with A + B, but the only unit ends inside B.
    const second = cache.observe(request([A, C]))
    expect(second.matchedChars).toBeGreaterThan(1100)
    expect(second).toMatchObject({ cachedTokens: 0, cacheWriteTokens: 384 })
    // The common prefix A (and a few characters) was persisted as a unit: floor(275 / 64) · 64 = 256 tokens.
    expect(cache.observe(request([A, D]))).toMatchObject({ cachedTokens: 256, cacheWriteTokens: 128 })
  })

  it('[guide] each unit is "an independent, complete unit": the longest unit the request fully matches is read', () => {
    const cache = new PrefixCache('deepseek')
    cache.observe(request([A, B]))
    cache.observe(request([A, C]))
    // Units: A + B (384 tokens), A (256), A + C (384). A + B + E fully matches A and A + B.
    expect(cache.observe(request([A, B, E]))).toMatchObject({
      promptTokens: 525,
      cachedTokens: 384,
      cacheWriteTokens: 128,
    })
  })

  it('[notes] "Once the cache is no longer in use, it will be automatically cleared": a unit idle for more than 3 hours is gone, and a hit keeps it in use', () => {
    const cache = new PrefixCache('deepseek')
    cache.observe(request([A, B]))
    cache.advanceClock(2 * HOUR)
    expect(cache.observe(request([A, B, C])).cachedTokens).toBe(384)
    cache.advanceClock(2 * HOUR)
    // Four hours after A + B was written, two after it was last hit.
    expect(cache.observe(request([A, B, D])).cachedTokens).toBe(384)
    cache.advanceClock(3 * HOUR + 1)
    const expired = cache.observe(request([A, B, E]))
    expect(expired).toMatchObject({ cachedTokens: 0, cacheWriteTokens: 512 })
    expect(expired.divergence).toMatchObject({ part: 'expired', offset: 0, idleMs: 3 * HOUR + 1 })
  })

  it('[news] "billing is based on actual cache hits" (prompt_cache_hit_tokens and prompt_cache_miss_tokens, no write field): writes are not a third bucket but part of the misses', () => {
    const cache = new PrefixCache('deepseek')
    for (const prompt of [request([A, B]), request([A, C]), request([A, D]), request([A, B, C])]) {
      const observation = cache.observe(prompt)
      expect(observation.cachedTokens + observation.uncachedTokens).toBe(observation.promptTokens)
      expect(observation.cacheWriteTokens).toBeLessThanOrEqual(observation.uncachedTokens)
    }
  })

  it('[guide] the unit at the "end position of the model output" is not modelled: the next request reads only up to the previous input (pessimistic)', () => {
    const cache = new PrefixCache('deepseek')
    cache.observe(request([A]))
    // DeepSeek would also hold A + the reply; the simulator sees requests only.
    const reply = createAssistantMessage([textBlock('x'.repeat(600))], ROUTE)
    expect(cache.observe(request([A, reply, B])).cachedTokens).toBe(256)
  })

  it('[guide] "Persistence at fixed token intervals" is not modelled (the interval is not published): leaving a long first input in its middle reads nothing (pessimistic)', () => {
    const cache = new PrefixCache('deepseek')
    cache.observe(request([userMessageOfChars(4100, 1), userMessageOfChars(1000, 2)]))
    // Shares the first 4100 characters and more, but the only unit ends inside the second message.
    const edited = cache.observe(request([userMessageOfChars(4100, 1), userMessageOfChars(1000, 3)]))
    expect(edited.matchedChars).toBeGreaterThan(4100)
    expect(edited.cachedTokens).toBe(0)
  })

  it('[notes] "best-effort", "does not guarantee a 100% cache hit rate": not modelled; the simulator is deterministic', () => {
    expect(observeABCD()).toEqual(observeABCD())
  })

  it('in the workload, warmfold summary calls read everything up to the instruction but the last partial storage unit; legacy misses', async () => {
    const warmfold = await runWorkload({ window: 32000, steps: 30, profile: 'deepseek' })
    expect(warmfold.summaryCalls.length).toBeGreaterThan(0)
    for (const call of warmfold.summaryCalls) {
      // The region ends where an earlier conversation request's input ended: a persisted unit,
      // which can end one storage unit short of the byte match (the match runs a few characters
      // into the instruction's opening).
      expect(call.divergence).toMatchObject({ part: 'message' })
      const readable = Math.floor(Math.floor(call.matchedChars / 4) / 64) * 64
      expect(call.cachedTokens).toBeLessThanOrEqual(readable)
      expect(call.cachedTokens).toBeGreaterThan(readable - 64)
      expect(call.cacheWriteTokens).toBeLessThanOrEqual(call.uncachedTokens)
    }
    const legacy = await runWorkload({ window: 32000, steps: 30, profile: 'deepseek', strategy: 'legacy' })
    expect(legacy.summaryCalls[0]?.cachedTokens).toBe(0)
  })
})
