import { PromptRenderer } from '@warmfold/cache-ledger/prefix'
import type { GenerateOptions, Message } from '@warmfold/llm'
import { canonicalJson, createUserMessage } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { PrefixCache } from '../src/index.ts'
import { letters, promptText, request, toolStep, TOOLS, userMessageOfChars } from './prefix-cache-fixture.ts'

const MINUTE = 60_000
/** A system prompt of 5000 letters: the tools+system breakpoint alone is over 1024 tokens. */
const LONG_SYSTEM = letters(42, 5000)
const renderer = new PromptRenderer(canonicalJson)

function users(count: number, seed = 0): Message[] {
  return Array.from({ length: count }, (_, index) =>
    createUserMessage(`message ${seed + index}: ${letters(seed + index, 40)}`),
  )
}

/** Whole tokens of the prompt up to the end of the tools + system breakpoint. */
function headTokens(options: GenerateOptions): number {
  const layout = renderer.layout(options)
  return Math.floor(layout.offsets[layout.headSegments]! / 4)
}

/** Whole tokens of the full prompt (the last breakpoint). */
function wholeTokens(options: GenerateOptions): number {
  return Math.floor(promptText(options).length / 4)
}

/** `count` tool steps, three content blocks each. */
function steps(count: number): Message[] {
  return Array.from({ length: count }, (_, index) => toolStep(index)).flat()
}

function blocksOf(options: GenerateOptions): number {
  return renderer.layout(options).segments.length
}

describe('profile anthropic', () => {
  it('has a 20-block lookback, a 1024-token minimum and a 5-minute TTL', () => {
    expect(new PrefixCache('anthropic').profile).toEqual({
      kind: 'anthropic',
      name: 'anthropic',
      lookbackBlocks: 20,
      minTokens: 1024,
      ttlMs: 5 * MINUTE,
    })
  })

  it('writes the whole prompt at its last breakpoint on a first request', () => {
    const cache = new PrefixCache('anthropic')
    const first = request(users(5), { tools: TOOLS, system: LONG_SYSTEM })
    const observation = cache.observe(first)
    expect(observation.cachedTokens).toBe(0)
    expect(observation.cacheWriteTokens).toBe(wholeTokens(first))
    expect(observation.divergence).toEqual({ part: 'first' })
  })

  it('writes only at breakpoints: a prefix that ended inside an earlier request reads only the head', () => {
    const cache = new PrefixCache('anthropic')
    const messages = users(5)
    cache.observe(request(messages, { system: LONG_SYSTEM }))
    // Messages 0..2 were sent before, but no breakpoint ended there: only tools+system was written.
    const shorter = request(messages.slice(0, 3), { system: LONG_SYSTEM })
    const observation = cache.observe(shorter)
    expect(observation.matchedChars).toBe(promptText(shorter).length)
    expect(observation.divergence).toEqual({ part: 'none' })
    expect(observation.cachedTokens).toBe(headTokens(shorter))
    expect(observation.cachedTokens).toBeLessThan(wholeTokens(shorter))
    expect(observation.cacheWriteTokens).toBe(wholeTokens(shorter) - headTokens(shorter))
    // Now its own last block was written, so the same request reads all of it.
    const again = cache.observe(shorter)
    expect(again.cachedTokens).toBe(wholeTokens(shorter))
    expect(again.cacheWriteTokens).toBe(0)
  })

  it('an extension reads the previous breakpoint write and writes only the new part', () => {
    const cache = new PrefixCache('anthropic')
    const before = [createUserMessage('start'), ...toolStep(0)]
    const previous = request(before, { tools: TOOLS, system: LONG_SYSTEM })
    const next = request([...before, ...toolStep(1)], { tools: TOOLS, system: LONG_SYSTEM })
    cache.observe(previous)
    const observation = cache.observe(next)
    expect(observation.cachedTokens).toBe(wholeTokens(previous))
    expect(observation.cacheWriteTokens).toBe(wholeTokens(next) - wholeTokens(previous))
  })

  it.each([1, 18, 19])(
    'an extension by %i blocks is within the 20-block lookback (the breakpoint counts as one)',
    (added) => {
      const cache = new PrefixCache('anthropic')
      const previous = request(users(1), { system: LONG_SYSTEM })
      const next = request([...users(1), ...users(added, 100)], { system: LONG_SYSTEM })
      expect(blocksOf(next) - blocksOf(previous)).toBe(added)
      cache.observe(previous)
      expect(cache.observe(next).cachedTokens).toBe(wholeTokens(previous))
    },
  )

  it.each([20, 21, 40])(
    'appending %i blocks after the last write misses the messages part and reads only tools + system',
    (added) => {
      const cache = new PrefixCache('anthropic')
      const previous = request(users(1), { tools: TOOLS, system: LONG_SYSTEM })
      const next = request([...users(1), ...users(added, 100)], { tools: TOOLS, system: LONG_SYSTEM })
      expect(blocksOf(next) - blocksOf(previous)).toBe(added)
      cache.observe(previous)
      const observation = cache.observe(next)
      expect(headTokens(next)).toBeGreaterThanOrEqual(1024)
      expect(observation.cachedTokens).toBe(headTokens(next))
      expect(observation.cacheWriteTokens).toBe(wholeTokens(next) - headTokens(next))
      // The simulator still reports the byte match, which is what a byte-prefix cache would reuse.
      expect(observation.matchedChars).toBe(promptText(previous).length)
    },
  )

  it('counts content blocks, not messages: six tool steps (18 blocks) hit, seven (21 blocks) miss', () => {
    const before = [createUserMessage('start')]
    for (const [count, hit] of [
      [6, true],
      [7, false],
    ] as const) {
      const cache = new PrefixCache('anthropic')
      const previous = request(before, { system: LONG_SYSTEM })
      const next = request([...before, ...steps(count)], { system: LONG_SYSTEM })
      expect(blocksOf(next) - blocksOf(previous)).toBe(count * 3)
      cache.observe(previous)
      expect(cache.observe(next).cachedTokens).toBe(hit ? wholeTokens(previous) : headTokens(next))
    }
  })

  it('reads nothing when the messages part is missed and the head is under 1024 tokens (never written)', () => {
    const cache = new PrefixCache('anthropic')
    // A short system prompt and a large first message: the last breakpoint is written, the head is not.
    const big = createUserMessage(letters(9, 6000))
    const previous = request([big], { system: 'You are careful.' })
    const first = cache.observe(previous)
    expect(headTokens(previous)).toBeLessThan(1024)
    expect(first.cacheWriteTokens).toBe(wholeTokens(previous))
    const missed = cache.observe(request([big, ...users(21, 100)], { system: 'You are careful.' }))
    expect(missed.cachedTokens).toBe(0)
    const near = cache.observe(request([big, ...users(19, 200)], { system: 'You are careful.' }))
    expect(near.cachedTokens).toBe(wholeTokens(previous))
  })

  it('caches nothing below 1024 tokens: a short prompt writes nothing and a repeat reads nothing', () => {
    const cache = new PrefixCache('anthropic')
    const short = request(users(10), { system: 'sys' })
    expect(wholeTokens(short)).toBeLessThan(1024)
    expect(cache.observe(short)).toMatchObject({ cachedTokens: 0, cacheWriteTokens: 0 })
    expect(cache.observe(short)).toMatchObject({ cachedTokens: 0, cacheWriteTokens: 0 })
  })

  it.each([
    [4095, 0],
    [4096, 1024],
    [4100, 1025],
  ])('a prompt of %i characters writes %i tokens, and its repeat reads exactly what was written', (chars, written) => {
    const cache = new PrefixCache('anthropic')
    const options = request([userMessageOfChars(chars)])
    expect(promptText(options).length).toBe(chars)
    const first = cache.observe(options)
    expect(first.promptTokens).toBe(Math.ceil(chars / 4))
    expect(first.cacheWriteTokens).toBe(written)
    const second = cache.observe(options)
    expect(second.cachedTokens).toBe(written)
    // Never a read below the minimum.
    expect(second.cachedTokens === 0 || second.cachedTokens >= 1024).toBe(true)
  })

  it('keeps an entry for 5 minutes after its write on the virtual clock and drops it after', () => {
    const cache = new PrefixCache('anthropic')
    const options = request(users(3), { system: LONG_SYSTEM })
    cache.observe(options)
    cache.advanceClock(5 * MINUTE)
    expect(cache.observe(options).cachedTokens).toBe(wholeTokens(options))
    cache.advanceClock(5 * MINUTE + 1)
    const expired = cache.observe(options)
    expect(expired.cachedTokens).toBe(0)
    expect(expired.cacheWriteTokens).toBe(wholeTokens(options))
  })

  it('a read refreshes the entry it read: a write used at minute 4 is still there at minute 8', () => {
    const cache = new PrefixCache('anthropic')
    const base = users(5)
    const first = request(base, { system: LONG_SYSTEM })
    cache.observe(first)
    cache.advanceClock(4 * MINUTE)
    // Reads the write at the end of `base` (one block back) and writes its own last block.
    expect(
      cache.observe(request([...base, createUserMessage('branch one')], { system: LONG_SYSTEM })).cachedTokens,
    ).toBe(wholeTokens(first))
    cache.advanceClock(4 * MINUTE)
    // Another branch off `base`: the end of `base` was last used 4 minutes ago, not 8.
    const branch = request([...base, createUserMessage('branch two')], { system: LONG_SYSTEM })
    const observation = cache.observe(branch)
    expect(observation.cachedTokens).toBe(wholeTokens(first))
    expect(observation.cacheWriteTokens).toBe(wholeTokens(branch) - wholeTokens(first))
    // Unused for more than 5 minutes: both the messages entry and the head are gone.
    cache.advanceClock(5 * MINUTE + 1)
    expect(
      cache.observe(request([...base, createUserMessage('branch three')], { system: LONG_SYSTEM })).cachedTokens,
    ).toBe(0)
  })

  it('an entry not read for more than 5 minutes expires even though a later request used another branch', () => {
    const cache = new PrefixCache('anthropic')
    const base = users(5)
    const first = request(base, { system: LONG_SYSTEM })
    cache.observe(first)
    cache.advanceClock(4 * MINUTE)
    // Shares only the head with `first`: refreshes the head entry, not the end of `base`.
    cache.observe(request(users(3, 50), { system: LONG_SYSTEM }))
    cache.advanceClock(2 * MINUTE)
    const observation = cache.observe(request([...base, createUserMessage('late')], { system: LONG_SYSTEM }))
    expect(observation.cachedTokens).toBe(headTokens(first))
  })

  it('a changed system prompt invalidates the head and every message after it', () => {
    const cache = new PrefixCache('anthropic')
    const messages = users(5)
    cache.observe(request(messages, { system: LONG_SYSTEM }))
    const changed = cache.observe(request(messages, { system: `${LONG_SYSTEM}!` }))
    expect(changed.cachedTokens).toBe(0)
    expect(changed.divergence).toMatchObject({ part: 'system', index: 0 })
  })
})
