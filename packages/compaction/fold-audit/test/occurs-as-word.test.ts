import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { artifactPresence, searchedSingleText } from '../src/artifact-presence.ts'
import type { ArtifactClass } from '../src/index.ts'
import { extractArtifacts } from '../src/index.ts'
import { occursAsWord } from '../src/occurs-as-word.ts'
import { searchableText } from '../src/searchable-text.ts'
import { HELD_OUT_FOLDER, loadCorpus } from './corpus-sample.ts'
import { naiveOccurs as naive } from './naive-occurrence.ts'

const found = (patterns: readonly string[], text: string): boolean[] =>
  patterns.map((pattern) => occursAsWord(text, pattern))

describe('occursAsWord', () => {
  it('respects word edges: a.ts is not in data.ts, 5ms not in 15ms, src/a.ts is in /app/src/a.ts:12', () => {
    expect(found(['a.ts', '5ms', 'ts'], 'data.ts took 15ms')).toEqual([false, false, true])
    expect(found(['src/a.ts', 'a.ts'], '/app/src/a.ts:12')).toEqual([true, true])
    expect(found(['.env', '-x', 'E'], 'a.env b-x E')).toEqual([true, true, true])
  })

  it('finds a pattern at the text edges, one without any word, and never the empty pattern', () => {
    expect(
      found(['ERROR upstream timed out after 30000ms', '30000 ms'], 'ERROR upstream timed out after 30000ms'),
    ).toEqual([true, false])
    expect(found(['->', '...', '=>'], 'a -> b ... c')).toEqual([true, true, false])
    expect(found(['x/invoice', 'invoice.ts'], 'invoice.tsx')).toEqual([false, false])
    expect(found(['', 'a'], 'a')).toEqual([false, true])
    // A glued occurrence first, a counted one later.
    expect(found(['src/invoice.ts'], 'src/invoice.tsx then (src/invoice.ts)')).toEqual([true])
    expect(found(['src/invoice.ts'], 'xsrc/invoice.ts')).toEqual([false])
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
        },
      ),
      { numRuns: 500 },
    )
    // Few letters, so that patterns overlap and glued occurrences precede counted ones.
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

  it('agrees with a naive search on every labelled sample: its artifacts in its own text and in the next sample', () => {
    const samples = [...loadCorpus(), ...loadCorpus(HELD_OUT_FOLDER)]
    let searched = 0
    for (const [index, sample] of samples.entries()) {
      const patterns = extractArtifacts(sample.messages).artifacts.map((artifact) => artifact.text)
      for (const other of [sample, samples[(index + 1) % samples.length]!]) {
        const text = searchableText(other.messages.map((logged) => logged.message))
        expect(found(patterns, text), `${sample.name} in ${other.name}`).toEqual(
          patterns.map((pattern) => naive(pattern, text)),
        )
        searched += patterns.length
      }
    }
    expect(searched).toBeGreaterThan(1000)
  })
})

describe('artifactPresence', () => {
  it('searches user messages case-insensitively, numbers with and without the space before the unit, and skips', () => {
    const artifacts: { class: ArtifactClass; text: string }[] = [
      { class: 'user-message', text: 'Never touch the API' },
      { class: 'number', text: '1.8 GB' },
      { class: 'number', text: '250ms' },
      { class: 'path', text: 'src/a.ts' },
      { class: 'path', text: 'src/b.ts' },
    ]
    const text = searchedSingleText('never touch the api: 1.8GB and 250 ms, in src/a.ts and src/b.ts')
    const [flags] = artifactPresence(artifacts, [text], new Uint8Array([0, 0, 0, 0, 1]))
    expect([...flags!]).toEqual([1, 1, 1, 1, 0])
  })
})
