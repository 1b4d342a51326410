import { createUserMessage } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { PrefixCache } from '../src/index.ts'
import { FIRST_TEXT_OFFSET, letters, promptText, request, userMessageOfChars } from './prefix-cache-fixture.ts'

/** A one-message request whose prompt is exactly `chars` characters. */
function promptOfChars(chars: number, seed = 1) {
  const options = request([userMessageOfChars(chars, seed)])
  expect(promptText(options).length).toBe(chars)
  return options
}

/** Observes `options` twice and returns the repeat. */
function repeat(cache: PrefixCache, options: ReturnType<typeof promptOfChars>) {
  cache.observe(options)
  return cache.observe(options)
}

describe('profile blocks:N', () => {
  it('parses blocks:16 as 16-token blocks without a minimum', () => {
    expect(new PrefixCache('blocks:16').profile).toEqual({
      kind: 'blocks',
      name: 'blocks:16',
      blockTokens: 16,
      minTokens: 0,
      ttlMs: Infinity,
    })
  })

  it.each([
    [160 * 4, 160],
    [160 * 4 + 1, 161],
    [161 * 4, 161],
    [175 * 4 + 3, 176],
    [176 * 4, 176],
    [177 * 4, 177],
  ])('blocks:16: a full repeat of %i characters (%i tokens) caches floor((tokens − 1) / 16) · 16', (chars, tokens) => {
    const observation = repeat(new PrefixCache('blocks:16'), promptOfChars(chars))
    expect(observation.promptTokens).toBe(tokens)
    expect(observation.cachedTokens).toBe(Math.floor((tokens - 1) / 16) * 16)
    expect(observation.cachedTokens % 16).toBe(0)
    expect(observation.cachedTokens).toBeLessThan(tokens)
    expect(observation.cacheWriteTokens).toBe(0)
  })

  it('blocks:16: a partial match is rounded down to whole blocks of whole matched tokens', () => {
    const cache = new PrefixCache('blocks:16')
    const text = letters(3, 900)
    cache.observe(request([createUserMessage(text)]))
    const changedAt = 500
    const next = request([createUserMessage(`${text.slice(0, changedAt)}#${text.slice(changedAt + 1)}`)])
    const observation = cache.observe(next)
    const matchedChars = FIRST_TEXT_OFFSET + changedAt
    expect(observation.matchedChars).toBe(matchedChars)
    expect(observation.cachedTokens).toBe(Math.floor(Math.floor(matchedChars / 4) / 16) * 16)
  })

  it('blocks:16: writes the whole blocks a request newly stores; the partial last block is not stored', () => {
    const cache = new PrefixCache('blocks:16')
    // 1000 characters: 250 tokens, 15 whole blocks (240 tokens) stored.
    const first = request([userMessageOfChars(1000, 1)])
    expect(cache.observe(first)).toMatchObject({ promptTokens: 250, cachedTokens: 0, cacheWriteTokens: 240 })
    // 1800 characters: 450 tokens, 28 whole blocks (448); the first 15 were stored already.
    const extended = request([userMessageOfChars(1000, 1), userMessageOfChars(800, 2)])
    expect(cache.observe(extended)).toMatchObject({
      promptTokens: 450,
      cachedTokens: 240,
      uncachedTokens: 210,
      cacheWriteTokens: 208,
    })
    // A repeat reads the 28 stored blocks and stores nothing new.
    expect(cache.observe(extended)).toMatchObject({ cachedTokens: 448, uncachedTokens: 2, cacheWriteTokens: 0 })
  })

  it('blocks:1 caches every token of a repeat but the last', () => {
    const observation = repeat(new PrefixCache('blocks:1'), promptOfChars(4 * 300))
    expect(observation.cachedTokens).toBe(299)
    expect(observation.uncachedTokens).toBe(1)
  })

  it('caches nothing for an empty prompt, first or repeated', () => {
    const cache = new PrefixCache('blocks:1')
    const options = request([])
    expect(cache.observe(options)).toMatchObject({ promptTokens: 0, cachedTokens: 0 })
    expect(cache.observe(options)).toMatchObject({ promptTokens: 0, cachedTokens: 0, uncachedTokens: 0 })
  })
})

describe('profile blocks:N:MIN', () => {
  it('parses blocks:128:1024', () => {
    expect(new PrefixCache('blocks:128:1024').profile).toEqual({
      kind: 'blocks',
      name: 'blocks:128:1024',
      blockTokens: 128,
      minTokens: 1024,
      ttlMs: Infinity,
    })
  })

  it.each([
    // tokens, expected cached: floor((tokens − 1) / 128) · 128, or 0 below 1024
    [1000, 0],
    [1024, 0],
    [1025, 1024],
    [1100, 1024],
    [1152, 1024],
    [1153, 1152],
    [2000, 1920],
  ])('a full repeat of %i tokens caches %i', (tokens, expected) => {
    const rule = Math.floor((tokens - 1) / 128) * 128
    expect(rule >= 1024 ? rule : 0).toBe(expected)
    const observation = repeat(new PrefixCache('blocks:128:1024'), promptOfChars(tokens * 4))
    expect(observation.promptTokens).toBe(tokens)
    expect(observation.cachedTokens).toBe(expected)
  })

  it('stores whole blocks below the minimum too: MIN gates reads, not storage', () => {
    const cache = new PrefixCache('blocks:128:1024')
    // 1000 characters: 250 tokens, one whole block of 128 stored, nothing read below 1024.
    const prompt = request([userMessageOfChars(1000, 1)])
    expect(cache.observe(prompt)).toMatchObject({ cachedTokens: 0, uncachedTokens: 250, cacheWriteTokens: 128 })
    expect(cache.observe(prompt)).toMatchObject({ cachedTokens: 0, uncachedTokens: 250, cacheWriteTokens: 0 })
  })

  it('caches nothing when the matched blocks stay below the minimum, even in a long prompt', () => {
    const cache = new PrefixCache('blocks:128:1024')
    const shared = letters(5, 3000)
    cache.observe(request([createUserMessage(`${shared}${letters(6, 3000)}`)]))
    const observation = cache.observe(request([createUserMessage(`${shared}${letters(7, 3000)}`)]))
    expect(observation.promptTokens).toBeGreaterThan(1024)
    // About 754 tokens match (3000 shared letters plus the block prefix): 5 whole blocks, under 1024.
    const matchedTokens = Math.floor(observation.matchedChars / 4)
    expect(matchedTokens).toBeLessThan(1024)
    expect(Math.floor(matchedTokens / 128) * 128).toBeGreaterThan(0)
    expect(observation.cachedTokens).toBe(0)
  })
})
