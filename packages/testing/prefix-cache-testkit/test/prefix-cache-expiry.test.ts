import { createUserMessage } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { assertNoSilentRewrite, PrefixCache } from '../src/index.ts'
import { silentRewrites } from '../src/cache-assertions.ts'
import { FIRST_TEXT_OFFSET, letters, promptText, request, userMessageOfChars } from './prefix-cache-fixture.ts'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
/** Three messages of exactly 1000, 800 and 1200 characters: prompts of 1000, 1800 and 3000. */
const M1 = userMessageOfChars(1000, 1)
const M2 = userMessageOfChars(800, 2)
const M3 = userMessageOfChars(1200, 3)

describe('every profile expires entries on the virtual clock', () => {
  it.each([
    // profile, ttl, tokens a full repeat of 3000 characters (750 tokens) reads while live
    ['bytes:ttl=600', 600 * SECOND, 750],
    ['blocks:16:ttl=600', 600 * SECOND, 736], // floor((750 − 1) / 16) · 16
    ['blocks:128:512:ttl=600', 600 * SECOND, 640], // floor(749 / 128) · 128, above the 512 minimum
    ['deepseek', 3 * HOUR, 704], // floor(750 / 64) · 64: whole 64-token storage units
    ['deepseek:ttl=600', 600 * SECOND, 704],
  ])(
    '%s: a prefix idle for exactly the ttl still reads, one millisecond more and it is gone',
    (profile, ttlMs, live) => {
      const cache = new PrefixCache(profile)
      const prompt = request([M1, M2, M3])
      expect(promptText(prompt).length).toBe(3000)
      cache.observe(prompt)
      cache.advanceClock(ttlMs)
      const justUnder = cache.observe(prompt)
      expect(justUnder).toMatchObject({ cachedTokens: live, matchedChars: 3000, divergence: { part: 'none' } })
      cache.advanceClock(ttlMs + 1)
      const justOver = cache.observe(prompt)
      expect(justOver).toMatchObject({ promptTokens: 750, cachedTokens: 0, uncachedTokens: 750, matchedChars: 0 })
      expect(justOver.divergence).toEqual({ part: 'expired', offset: 0, expiredChars: 3000, idleMs: ttlMs + 1 })
    },
  )

  it.each([
    ['anthropic', 5 * MINUTE],
    ['anthropic:1h', HOUR],
    ['anthropic:ttl=90', 90 * SECOND],
  ])(
    '%s: an entry idle for exactly the ttl is read, one millisecond more and it is written again',
    (profile, ttlMs) => {
      const cache = new PrefixCache(profile)
      // One message of 4400 characters: 1100 whole tokens, above the 1024-token minimum.
      const prompt = request([userMessageOfChars(4400, 9)])
      expect(cache.observe(prompt)).toMatchObject({ cachedTokens: 0, cacheWriteTokens: 1100 })
      cache.advanceClock(ttlMs)
      expect(cache.observe(prompt)).toMatchObject({
        cachedTokens: 1100,
        cacheWriteTokens: 0,
        divergence: { part: 'none' },
      })
      cache.advanceClock(ttlMs + 1)
      const expired = cache.observe(prompt)
      expect(expired).toMatchObject({ cachedTokens: 0, cacheWriteTokens: 1100, matchedChars: 0 })
      expect(expired.divergence).toEqual({ part: 'expired', offset: 0, expiredChars: 4400, idleMs: ttlMs + 1 })
    },
  )

  it('anthropic:1h: a read refreshes the entry, so an hour and a half after the write it is still there', () => {
    const cache = new PrefixCache('anthropic:1h')
    const prompt = request([userMessageOfChars(4400, 9)])
    cache.observe(prompt)
    cache.advanceClock(45 * MINUTE)
    expect(cache.observe(prompt).cachedTokens).toBe(1100)
    cache.advanceClock(45 * MINUTE)
    expect(cache.observe(prompt).cachedTokens).toBe(1100)
    // The 5-minute default would have lost it long ago.
    const short = new PrefixCache('anthropic')
    short.observe(prompt)
    short.advanceClock(45 * MINUTE)
    expect(short.observe(prompt).cachedTokens).toBe(0)
  })

  it.each([
    // profile, ttl, what the extension reads of [M1, M2] (1800 characters)
    ['bytes:ttl=600', 600 * SECOND, 450],
    ['blocks:16:ttl=600', 600 * SECOND, 448], // floor(450 / 16) · 16
    ['deepseek:ttl=600', 600 * SECOND, 448], // the end-of-input unit of [M1, M2], floor(450 / 64) · 64
  ])('%s: sending a prefix refreshes it, so a branch off it later still reads it', (profile, ttlMs, shared) => {
    const cache = new PrefixCache(profile)
    cache.observe(request([M1, M2]))
    cache.advanceClock(ttlMs - MINUTE)
    // Reads [M1, M2] and sends it again.
    expect(cache.observe(request([M1, M2, M3])).cachedTokens).toBe(shared)
    cache.advanceClock(ttlMs - MINUTE)
    // Twice the ttl after the first send, minus two minutes: [M1, M2] was last sent ttl − 1 min ago.
    const branch = cache.observe(request([M1, M2, userMessageOfChars(1200, 4)]))
    const matched = 1800 + FIRST_TEXT_OFFSET + commonLetters(3, 4)
    expect(branch.matchedChars).toBe(matched)
    // bytes also reads the part of the third message's segment it shares with M3's.
    expect(branch.cachedTokens).toBe(profile.startsWith('bytes') ? Math.floor(matched / 4) : shared)
    expect(branch.divergence).toEqual({ part: 'message', index: 2, blockIndex: 0, offset: matched })
  })

  it('names how much expiry cost: the live part is the offset, the expired part after it and how long it was idle', () => {
    const cache = new PrefixCache('bytes:ttl=600')
    cache.observe(request([M1, M2, M3]))
    cache.advanceClock(400 * SECOND)
    // Refreshes M1 only (the branch after it is new).
    cache.observe(request([M1, userMessageOfChars(500, 7)]))
    cache.advanceClock(300 * SECOND)
    const observation = cache.observe(request([M1, M2, M3, createUserMessage('next')]))
    // M1 and the 500-character branch were sent 300 s ago (live); M2 and M3 700 s ago (expired
    // after 600 s). The branch's segment shares its opening with M2's, so that much is live.
    const live = 1000 + FIRST_TEXT_OFFSET + commonPrefix(letters(2, 100), letters(7, 100))
    expect(observation.matchedChars).toBe(live)
    expect(observation.cachedTokens).toBe(Math.floor(live / 4))
    expect(observation.divergence).toEqual({
      part: 'expired',
      offset: live,
      expiredChars: 3000 - live,
      idleMs: 700 * SECOND,
    })
    // Sending them again makes them live: the next extension reads all of it.
    expect(
      cache.observe(request([M1, M2, M3, createUserMessage('next'), createUserMessage('again')])).divergence,
    ).toMatchObject({ part: 'message', index: 4 })
  })

  it('counts an expired partial match inside a segment, and reports the structural break when expiry cost nothing', () => {
    const cache = new PrefixCache('bytes:ttl=60')
    const text = letters(5, 400)
    cache.observe(request([M1, createUserMessage(text)]))
    cache.advanceClock(30 * SECOND)
    cache.observe(request([M1, createUserMessage('other')]))
    cache.advanceClock(31 * SECOND)
    // The 400 letters were sent 61 s ago; M1 31 s ago. The new text shares 200 letters with the old one.
    const changed = cache.observe(request([M1, createUserMessage(`${text.slice(0, 200)}#`)]))
    const liveShared = FIRST_TEXT_OFFSET + commonPrefix('other', text)
    expect(changed.matchedChars).toBe(1000 + liveShared)
    expect(changed.divergence).toEqual({
      part: 'expired',
      offset: 1000 + liveShared,
      expiredChars: 200 - commonPrefix('other', text),
      idleMs: 61 * SECOND,
    })
    // Nothing expired matters for a request that branches off inside the live part.
    const live = cache.observe(request([userMessageOfChars(1000, 8)]))
    expect(live.divergence).toMatchObject({ part: 'message', index: 0, blockIndex: 0 })
  })

  it('reports a family whose every prefix expired as expired at offset 0, not as a new envelope', () => {
    const cache = new PrefixCache('bytes:ttl=60')
    const prompt = request([M1, M2])
    cache.observe(prompt)
    cache.observe(request([M1, M2], { reasoningEffort: 'low' }))
    cache.advanceClock(61 * SECOND)
    const back = cache.observe(prompt)
    expect(back.cachedTokens).toBe(0)
    expect(back.divergence).toEqual({ part: 'expired', offset: 0, expiredChars: 1800, idleMs: 61 * SECOND })
    // The very first request of a family still says envelope.
    expect(cache.observe(request([M1], { reasoningEffort: 'high' })).divergence).toEqual({
      part: 'envelope',
      field: 'reasoningEffort',
    })
  })

  it('bytes and blocks never expire without a ttl', () => {
    for (const profile of ['bytes', 'blocks:16']) {
      const cache = new PrefixCache(profile)
      const prompt = request([M1, M2])
      cache.observe(prompt)
      cache.advanceClock(10 * 365 * 24 * HOUR)
      expect(cache.observe(prompt)).toMatchObject({ matchedChars: 1800, divergence: { part: 'none' } })
    }
  })

  it('expiry does not change extendsPrevious: an idle session is not a silent rewrite, a real rewrite still is', () => {
    const cache = new PrefixCache('anthropic')
    const conversation = { purpose: 'conversation', sessionId: 's' } as const
    cache.observe(request([M1], conversation))
    cache.advanceClock(HOUR)
    const resumed = cache.observe(request([M1, M2], conversation))
    expect(resumed.divergence).toEqual({ part: 'expired', offset: 0, expiredChars: 1000, idleMs: HOUR })
    expect(resumed.extendsPrevious).toBe(true)
    expect(() => assertNoSilentRewrite(cache.observations)).not.toThrow()
    cache.advanceClock(HOUR)
    // Drops M2 without a logged rewrite, after the cache expired: still a break of rule C1.
    const rewritten = cache.observe(request([M1, M3], conversation))
    expect(rewritten.extendsPrevious).toBe(false)
    expect(silentRewrites(cache.observations)).toEqual([rewritten])
  })
})

function commonPrefix(left: string, right: string): number {
  let index = 0
  while (index < left.length && index < right.length && left[index] === right[index]) index++
  return index
}

/** Common leading letters of the texts of `userMessageOfChars(1200, seedA)` and `(1200, seedB)`. */
function commonLetters(seedA: number, seedB: number): number {
  return commonPrefix(letters(seedA, 1200), letters(seedB, 1200))
}
