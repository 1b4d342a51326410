import type { GenerateOptions } from '@warmfold/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { CacheObservation } from '../src/index.ts'
import { PrefixCache } from '../src/index.ts'
import { commonPrefix, promptBlocks, promptText } from './prefix-cache-fixture.ts'
import { build, envelopeOf, requestArbitrary } from './random-requests.ts'

const TTL = 300_000
/** A request and the virtual time waited before it, across every profile's ttl. */
const stepArbitrary = fc.record({
  drawn: requestArbitrary,
  waitMs: fc.constantFrom(0, 90_000, 299_999, 300_000, 300_001, 3_600_000, 3_600_001, 10_800_001),
})

interface Sent {
  readonly family: string
  readonly text: string
  readonly blocks: readonly string[]
  readonly time: number
}

/**
 * Brute-force model of a trie with a ttl: a block prefix is live when some request of the family
 * sent those exact blocks within the ttl; a request's live match is its longest common prefix
 * with the live part of any earlier request of its family.
 */
class ExpiryModel {
  readonly sent: Sent[] = []
  clock = 0

  constructor(readonly ttlMs: number) {}

  /** Last time the first `count` blocks of `blocks` were sent in `family`. */
  lastSent(family: string, blocks: readonly string[], count: number): number {
    let last = Number.NEGATIVE_INFINITY
    for (const earlier of this.sent) {
      if (
        earlier.family === family &&
        earlier.blocks.length >= count &&
        blocks.slice(0, count).every((block, index) => earlier.blocks[index] === block)
      )
        last = Math.max(last, earlier.time)
    }
    return last
  }

  liveText(earlier: Sent): string {
    let count = 0
    while (
      count < earlier.blocks.length &&
      this.clock - this.lastSent(earlier.family, earlier.blocks, count + 1) <= this.ttlMs
    )
      count++
    return earlier.blocks.slice(0, count).join('')
  }

  /** Live and full (expiry ignored) matches, and the idle time of the first expired character. */
  match(options: GenerateOptions): { live: number; full: number; idleMs?: number } | undefined {
    const family = envelopeOf(options)
    const text = promptText(options)
    const earlier = this.sent.filter((entry) => entry.family === family)
    if (earlier.length === 0) return undefined
    const live = Math.max(...earlier.map((entry) => commonPrefix(text, this.liveText(entry))))
    const full = Math.max(...earlier.map((entry) => commonPrefix(text, entry.text)))
    if (full <= live) return { live, full }
    let last = Number.NEGATIVE_INFINITY
    for (const entry of earlier) {
      if (commonPrefix(text, entry.text) <= live) continue
      // The block of `entry` holding character `live`.
      let count = 0
      let start = 0
      while (start + (entry.blocks[count] as string).length <= live) start += (entry.blocks[count++] as string).length
      last = Math.max(last, this.lastSent(family, entry.blocks, count + 1))
    }
    return { live, full, idleMs: this.clock - last }
  }

  send(options: GenerateOptions): void {
    this.sent.push({
      family: envelopeOf(options),
      text: promptText(options),
      blocks: promptBlocks(options),
      time: this.clock,
    })
  }
}

/** `chars` rounded down to whole 64-token storage units of whole tokens, in characters. */
function roundDown(chars: number): number {
  return Math.floor(Math.floor(chars / 4) / 64) * 256
}

/** DeepSeek units written out independently: family + exact prefix text → last used. */
class DeepSeekModel {
  private readonly units = new Map<string, { family: string; text: string; usedAt: number }>()

  charge(
    options: GenerateOptions,
    liveMatch: number,
    clock: number,
    ttlMs: number,
  ): { cached: number; written: number } {
    const family = envelopeOf(options)
    const text = promptText(options)
    let read = 0
    for (const unit of this.units.values()) {
      if (unit.family === family && clock - unit.usedAt <= ttlMs && text.startsWith(unit.text))
        read = Math.max(read, unit.text.length)
    }
    const inputEnd = roundDown(text.length)
    for (const end of [read, roundDown(liveMatch), inputEnd]) {
      if (end > 0)
        this.units.set(`${family}\u0000${text.slice(0, end)}`, { family, text: text.slice(0, end), usedAt: clock })
    }
    return { cached: read / 4, written: Math.max(0, inputEnd - read) / 4 }
  }
}

describe('expiry and writes against brute-force models (property)', () => {
  it('bytes, blocks and deepseek with a ttl: live match, cached and written tokens, and the expired divergence', () => {
    let expiredSeen = 0
    let unitReads = 0
    let strictUnitMisses = 0
    fc.assert(
      fc.property(fc.array(stepArbitrary, { minLength: 1, maxLength: 12 }), (steps) => {
        const bytes = new PrefixCache('bytes:ttl=300')
        const blocks = new PrefixCache('blocks:16:ttl=300')
        const deepseek = new PrefixCache('deepseek:ttl=300')
        const model = new ExpiryModel(TTL)
        const units = new DeepSeekModel()
        for (const { drawn, waitMs } of steps) {
          for (const cache of [bytes, blocks, deepseek]) cache.advanceClock(waitMs)
          model.clock += waitMs
          const options = build(drawn)
          const chars = promptText(options).length
          const tokens = Math.ceil(chars / 4)
          const match = model.match(options)
          const live = match?.live ?? 0
          const observed = [bytes.observe(options), blocks.observe(options), deepseek.observe(options)]
          for (const observation of observed) {
            expect(observation.matchedChars).toBe(live)
            if (match && match.full > match.live) {
              expect(observation.divergence).toEqual({
                part: 'expired',
                offset: live,
                expiredChars: match.full - live,
                idleMs: match.idleMs,
              })
              expect(match.idleMs).toBeGreaterThan(TTL)
            } else {
              expect(observation.divergence.part).not.toBe('expired')
            }
          }
          const [byteObservation, blockObservation, deepseekObservation] = observed as [
            CacheObservation,
            CacheObservation,
            CacheObservation,
          ]
          expect(byteObservation).toMatchObject({
            cachedTokens: Math.floor(live / 4),
            cacheWriteTokens: tokens - Math.floor(live / 4),
          })
          expect(blockObservation.cachedTokens).toBe(
            Math.floor(Math.max(0, Math.min(Math.floor(live / 4), tokens - 1)) / 16) * 16,
          )
          expect(blockObservation.cacheWriteTokens).toBe(
            Math.floor(Math.floor(chars / 4) / 16) * 16 - Math.floor(Math.floor(live / 4) / 16) * 16,
          )
          const expected = units.charge(options, live, model.clock, TTL)
          expect(deepseekObservation).toMatchObject({
            cachedTokens: expected.cached,
            cacheWriteTokens: expected.written,
          })
          if (match && match.full > match.live) expiredSeen++
          if (expected.cached > 0) unitReads++
          // A byte match of whole storage units that is no persisted unit: the full-match rule at work.
          if (expected.cached < Math.floor(Math.floor(live / 4) / 64) * 64) strictUnitMisses++
          model.send(options)
        }
      }),
      { numRuns: 150 },
    )
    // The runs really produced expired prefixes, unit reads, and byte matches no unit covers.
    expect(expiredSeen).toBeGreaterThan(0)
    expect(unitReads).toBeGreaterThan(0)
    expect(strictUnitMisses).toBeGreaterThan(0)
  })

  it('every profile, random clocks: 0 ≤ cacheWriteTokens ≤ uncachedTokens, 0 ≤ cachedTokens ≤ promptTokens, and an expired divergence is consistent', () => {
    const profiles = [
      'bytes',
      'bytes:ttl=300',
      'blocks:16',
      'blocks:16:ttl=300',
      'blocks:128:1024',
      'blocks:128:1024:ttl=300',
      'anthropic',
      'anthropic:1h',
      'anthropic:ttl=90',
      'deepseek',
      'deepseek:ttl=300',
    ]
    fc.assert(
      fc.property(fc.array(stepArbitrary, { minLength: 1, maxLength: 12 }), (steps) => {
        const caches = profiles.map((profile) => new PrefixCache(profile))
        for (const { drawn, waitMs } of steps) {
          const options = build(drawn)
          for (const cache of caches) {
            cache.advanceClock(waitMs)
            const observation = cache.observe(options)
            expect(observation.cachedTokens).toBeGreaterThanOrEqual(0)
            expect(observation.cachedTokens).toBeLessThanOrEqual(observation.promptTokens)
            expect(observation.uncachedTokens).toBe(observation.promptTokens - observation.cachedTokens)
            expect(observation.cacheWriteTokens).toBeGreaterThanOrEqual(0)
            expect(observation.cacheWriteTokens).toBeLessThanOrEqual(observation.uncachedTokens)
            expect(observation.matchedChars).toBeLessThanOrEqual(observation.promptChars)
            const divergence = observation.divergence
            if (divergence.part === 'expired') {
              expect(divergence.offset).toBe(observation.matchedChars)
              expect(divergence.expiredChars).toBeGreaterThan(0)
              expect(divergence.offset + divergence.expiredChars).toBeLessThanOrEqual(observation.promptChars)
              expect(divergence.idleMs).toBeGreaterThan(cache.profile.ttlMs)
            }
          }
        }
      }),
      { numRuns: 100 },
    )
  })
})
