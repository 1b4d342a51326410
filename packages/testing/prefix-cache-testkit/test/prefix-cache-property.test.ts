import type { GenerateOptions } from '@warmfold/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { CacheObservation } from '../src/index.ts'
import { PrefixCache } from '../src/index.ts'
import { silentRewrites } from '../src/cache-assertions.ts'
import { commonPrefix, promptBlocks, promptText } from './prefix-cache-fixture.ts'
import { build, envelopeOf, requestArbitrary } from './random-requests.ts'

/** Tokens in the whole blocks of `chars` characters' whole tokens: what a block cache stores. */
function wholeBlocks(chars: number, blockTokens: number): number {
  return Math.floor(Math.floor(chars / 4) / blockTokens) * blockTokens
}

/** Longest common prefix with any earlier request of the same family, or undefined for a new family. */
function bestMatch(history: readonly GenerateOptions[], options: GenerateOptions): number | undefined {
  let best: number | undefined
  const text = promptText(options)
  for (const earlier of history) {
    if (envelopeOf(earlier) !== envelopeOf(options)) continue
    best = Math.max(best ?? 0, commonPrefix(promptText(earlier), text))
  }
  return best
}

/** Independent Anthropic model: entries keyed by family + exact prefix text at a breakpoint. */
class AnthropicModel {
  private readonly entries = new Map<string, number>()
  private clock = 0
  advance(milliseconds: number): void {
    this.clock += milliseconds
  }
  charge(options: GenerateOptions): { cached: number; written: number } {
    const blocks = promptBlocks(options)
    const head = (options.tools?.length ?? 0) + (options.system ? 1 : 0)
    const breakpoints = [...new Set([head - 1, blocks.length - 1])].filter((position) => position >= 0)
    const prefix = (position: number) => blocks.slice(0, position + 1).join('')
    const key = (position: number) => `${envelopeOf(options)}|${prefix(position)}`
    let read = 0
    let readKey: string | undefined
    for (const breakpoint of breakpoints) {
      for (let position = breakpoint; position >= 0 && position > breakpoint - 20; position--) {
        const used = this.entries.get(key(position))
        if (used === undefined || this.clock - used > 300_000) continue
        if (prefix(position).length > read) {
          read = prefix(position).length
          readKey = key(position)
        }
        break
      }
    }
    if (readKey) this.entries.set(readKey, this.clock)
    const cached = Math.floor(read / 4)
    const last = Math.floor(promptText(options).length / 4)
    const written = last >= 1024 ? Math.max(0, last - cached) : 0
    for (const breakpoint of breakpoints)
      if (Math.floor(prefix(breakpoint).length / 4) >= 1024) this.entries.set(key(breakpoint), this.clock)
    return { cached, written }
  }
}

describe('PrefixCache against a brute-force model (property)', () => {
  it('bytes and blocks: cached tokens follow the profile rule over the longest prefix shared with ANY earlier request of the family', () => {
    fc.assert(
      fc.property(fc.array(requestArbitrary, { minLength: 1, maxLength: 12 }), (drawnList) => {
        const profiles = [
          {
            cache: new PrefixCache('bytes'),
            rule: (matched: number) => Math.floor(matched / 4),
            written: (chars: number, cached: number) => Math.ceil(chars / 4) - cached,
          },
          {
            cache: new PrefixCache('blocks:16'),
            rule: (matched: number, tokens: number) =>
              Math.floor(Math.max(0, Math.min(Math.floor(matched / 4), tokens - 1)) / 16) * 16,
            written: (chars: number, _cached: number, matched: number) =>
              wholeBlocks(chars, 16) - wholeBlocks(matched, 16),
          },
          {
            cache: new PrefixCache('blocks:128:1024'),
            rule: (matched: number, tokens: number) => {
              const cached = Math.floor(Math.max(0, Math.min(Math.floor(matched / 4), tokens - 1)) / 128) * 128
              return cached >= 1024 ? cached : 0
            },
            written: (chars: number, _cached: number, matched: number) =>
              wholeBlocks(chars, 128) - wholeBlocks(matched, 128),
          },
        ]
        const history: GenerateOptions[] = []
        for (const drawn of drawnList) {
          const options = build(drawn)
          const text = promptText(options)
          const tokens = Math.ceil(text.length / 4)
          const matched = bestMatch(history, options)
          for (const { cache, rule, written } of profiles) {
            const observation = cache.observe(options)
            expect(observation.promptChars).toBe(text.length)
            expect(observation.promptTokens).toBe(tokens)
            expect(observation.matchedChars).toBe(matched ?? 0)
            expect(observation.cachedTokens).toBe(rule(matched ?? 0, tokens))
            expect(observation.uncachedTokens).toBe(tokens - observation.cachedTokens)
            expect(observation.cacheWriteTokens).toBe(written(text.length, observation.cachedTokens, matched ?? 0))
            checkDivergence(observation, history, options, matched)
          }
          history.push(options)
        }
      }),
      { numRuns: 150 },
    )
  })

  it('anthropic: reads and writes match an independent breakpoint model, and a read is 0 or at least 1024 tokens', () => {
    let runs = 0
    let reads = 0
    let partialReads = 0
    fc.assert(
      fc.property(fc.array(requestArbitrary, { minLength: 1, maxLength: 12 }), (drawnList) => {
        const cache = new PrefixCache('anthropic')
        const model = new AnthropicModel()
        runs++
        for (const drawn of drawnList) {
          cache.advanceClock(drawn.waitMs)
          model.advance(drawn.waitMs)
          const options = build(drawn)
          const observation = cache.observe(options)
          const expected = model.charge(options)
          expect(observation.cachedTokens).toBe(expected.cached)
          expect(observation.cacheWriteTokens).toBe(expected.written)
          expect(observation.cachedTokens === 0 || observation.cachedTokens >= 1024).toBe(true)
          expect(observation.cachedTokens).toBeLessThanOrEqual(Math.floor(observation.matchedChars / 4))
          if (observation.cachedTokens > 0) reads++
          if (observation.cachedTokens > 0 && observation.cachedTokens < Math.floor(observation.matchedChars / 4))
            partialReads++
        }
      }),
      { numRuns: 150 },
    )
    // The runs really exercised reads, including reads shorter than the byte match.
    expect(runs).toBeGreaterThan(0)
    expect(reads).toBeGreaterThan(0)
    expect(partialReads).toBeGreaterThan(0)
  })

  it('extendsPrevious is true exactly when a conversation request keeps every block of its session’s previous one (same family) and adds one', () => {
    fc.assert(
      fc.property(fc.array(requestArbitrary, { minLength: 1, maxLength: 12 }), (drawnList) => {
        const cache = new PrefixCache('bytes')
        const previous = new Map<string, GenerateOptions>()
        const observations: CacheObservation[] = []
        for (const drawn of drawnList) {
          const options = build(drawn)
          const observation = cache.observe(options)
          observations.push(observation)
          const session = options.sessionId
          if (session === undefined || options.purpose !== 'conversation') {
            expect(observation.extendsPrevious).toBe(false)
            continue
          }
          const last = previous.get(session)
          const blocks = promptBlocks(options)
          const expected =
            !!last &&
            envelopeOf(last) === envelopeOf(options) &&
            promptBlocks(last).length < blocks.length &&
            promptBlocks(last).every((block, index) => blocks[index] === block)
          expect(observation.extendsPrevious).toBe(expected)
          previous.set(session, options)
        }
        // Without any logged rewrite, every conversation request but a session's first that does not extend is silent.
        const expectedSilent = observations.filter((observation, index) => {
          if (observation.purpose !== 'conversation' || observation.sessionId === undefined) return false
          const firstOfSession = !observations
            .slice(0, index)
            .some((earlier) => earlier.purpose === 'conversation' && earlier.sessionId === observation.sessionId)
          return !firstOfSession && !observation.extendsPrevious
        })
        expect(silentRewrites(observations)).toEqual(expectedSilent)
      }),
      { numRuns: 150 },
    )
  })
})

function checkDivergence(
  observation: CacheObservation,
  history: readonly GenerateOptions[],
  options: GenerateOptions,
  matched: number | undefined,
): void {
  const text = promptText(options)
  if (matched === undefined) {
    const last = history.at(-1)
    if (!last) {
      expect(observation.divergence).toEqual({ part: 'first' })
      return
    }
    // Only the effort varies in these requests.
    expect(observation.divergence).toEqual({ part: 'envelope', field: 'reasoningEffort' })
    return
  }
  if (matched >= text.length) {
    expect(observation.divergence).toEqual({ part: 'none' })
    return
  }
  // The block that holds the first differing character.
  const blocks = promptBlocks(options)
  let start = 0
  let position = 0
  while (start + blocks[position]!.length <= matched) start += blocks[position++]!.length
  const head = (options.tools?.length ?? 0) + (options.system ? 1 : 0)
  const toolCount = options.tools?.length ?? 0
  if (position < toolCount)
    expect(observation.divergence).toStrictEqual({ part: 'tools', index: position, offset: matched })
  else if (position < head) expect(observation.divergence).toStrictEqual({ part: 'system', index: 0, offset: matched })
  else {
    let remaining = position - head
    let index = 0
    while (remaining >= options.messages[index]!.content.length) remaining -= options.messages[index++]!.content.length
    expect(observation.divergence).toStrictEqual({ part: 'message', index, blockIndex: remaining, offset: matched })
  }
}
