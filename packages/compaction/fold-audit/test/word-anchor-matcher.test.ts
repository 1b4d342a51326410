import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { extractArtifacts, MAX_PATTERNS_PER_ANCHOR, MultiPatternMatcher, WordAnchorMatcher } from '../src/index.ts'
import { FEW_PATTERNS, occurrenceFinder } from '../src/occurrences.ts'
import { searchableText } from '../src/searchable-text.ts'
import { HELD_OUT_FOLDER, loadCorpus } from './corpus-sample.ts'
import { foundBy, naiveOccurs as naive } from './naive-occurrence.ts'

const found = (patterns: readonly string[], text: string): boolean[] => foundBy(WordAnchorMatcher, patterns, text)

describe('WordAnchorMatcher', () => {
  it('respects word edges: a.ts is not in data.ts, 5ms not in 15ms, src/a.ts is in /app/src/a.ts:12', () => {
    expect(found(['a.ts', '5ms', 'ts'], 'data.ts took 15ms')).toEqual([false, false, true])
    expect(found(['src/a.ts', 'a.ts'], '/app/src/a.ts:12')).toEqual([true, true])
    expect(found(['.env', '-x', 'E'], 'a.env b-x E')).toEqual([true, true, true])
  })

  it('finds a pattern by a word in its middle, at the text edges, and one without any word', () => {
    // The rarest word anchors: `invoice` is in one pattern, `src` and `ts` in both.
    expect(found(['src/billing/invoice.ts', 'src/cart.ts'], 'see src/billing/invoice.ts')).toEqual([true, false])
    expect(
      found(['ERROR upstream timed out after 30000ms', '30000 ms'], 'ERROR upstream timed out after 30000ms'),
    ).toEqual([true, false])
    expect(found(['->', '...', '=>'], 'a -> b ... c')).toEqual([true, true, false])
    // Where the anchor occurs but the pattern does not begin inside the text, or is glued to a word.
    expect(found(['x/invoice', 'invoice.ts'], 'invoice.tsx')).toEqual([false, false])
    expect(found(['', 'a'], 'a')).toEqual([false, true])
    // `invoice` anchors the first pattern (the others share `src` and `ts`), so its edges are checked on their own.
    const paths = ['src/invoice.ts', 'src/a.ts', 'src/b.ts']
    expect(found(paths, 'src/invoice.tsx')).toEqual([false, false, false])
    expect(found(paths, 'xsrc/invoice.ts')).toEqual([false, false, false])
    expect(found(paths, '(src/invoice.ts)')).toEqual([true, false, false])
  })

  it('reports every duplicate and leaves flags already set alone', () => {
    const flags = new Uint8Array([0, 0, 1])
    new WordAnchorMatcher(['pnpm test', 'pnpm test', 'absent']).markFound('run pnpm test now', flags)
    expect([...flags]).toEqual([1, 1, 1])
  })

  it('agrees with a naive search on random patterns and texts', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', '.', '/', ' ', '1', '_', '-', 'é', '😀')
    const word = fc.array(alphabet, { minLength: 1, maxLength: 8 }).map((characters) => characters.join(''))
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 60 }),
        fc.array(alphabet, { maxLength: 120 }).map((characters) => characters.join('')),
        (patterns, text) => {
          expect(found(patterns, text)).toEqual(patterns.map((pattern) => naive(pattern, text)))
          expect([...occurrenceFinder(patterns)(text)].map(Boolean)).toEqual(
            patterns.map((pattern) => naive(pattern, text)),
          )
        },
      ),
      { numRuns: 500 },
    )
    // Few letters, so that patterns share words and anchor in their middle.
    const letters = fc.constantFrom('a', 'b', 'c', '.', ' ')
    const spaced = fc.array(letters, { minLength: 1, maxLength: 9 }).map((characters) => characters.join(''))
    fc.assert(
      fc.property(
        fc.array(spaced, { minLength: 1, maxLength: 40 }),
        fc.array(letters, { maxLength: 60 }).map((characters) => characters.join('')),
        (patterns, text) => {
          expect(found(patterns, text)).toEqual(patterns.map((pattern) => naive(pattern, text)))
        },
      ),
      { numRuns: 500 },
    )
  })

  it('says when one anchor stands for too many patterns, and the finder then takes the automaton with the same answers', () => {
    const crowded = Array.from({ length: MAX_PATTERNS_PER_ANCHOR + 1 }, (_, index) => `${'.'.repeat(index)}pnpm`)
    expect(new WordAnchorMatcher(crowded).linear).toBe(false)
    expect(new WordAnchorMatcher(crowded.slice(1)).linear).toBe(true)
    const patterns = [...crowded, ...Array.from({ length: FEW_PATTERNS }, (_, index) => `src/m${index}.ts`)]
    const text = `..pnpm run, then src/m3.ts and ${'.'.repeat(MAX_PATTERNS_PER_ANCHOR)}pnpm`
    expect([...occurrenceFinder(patterns)(text)].map(Boolean)).toEqual(patterns.map((pattern) => naive(pattern, text)))
  })

  it('agrees with the automaton on every labelled sample: its artifacts searched for in its own text and in the next sample', () => {
    const samples = [...loadCorpus(), ...loadCorpus(HELD_OUT_FOLDER)]
    let searched = 0
    for (const [index, sample] of samples.entries()) {
      const patterns = extractArtifacts(sample.messages).artifacts.map((artifact) => artifact.text)
      for (const other of [sample, samples[(index + 1) % samples.length]!]) {
        const text = searchableText(other.messages.map((logged) => logged.message))
        const byAnchor = new Uint8Array(patterns.length)
        const byAutomaton = new Uint8Array(patterns.length)
        new WordAnchorMatcher(patterns).markFound(text, byAnchor)
        new MultiPatternMatcher(patterns).markFound(text, byAutomaton)
        expect([...byAnchor], `${sample.name} in ${other.name}`).toEqual([...byAutomaton])
        searched += patterns.length
      }
    }
    expect(searched).toBeGreaterThan(1000)
  })
})
