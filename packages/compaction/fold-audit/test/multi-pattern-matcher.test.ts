import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MultiPatternMatcher } from '../src/index.ts'
import { occursAsWord } from '../src/occurs-as-word.ts'
import { foundBy, naiveOccurs as naive } from './naive-occurrence.ts'

const found = (patterns: readonly string[], text: string): boolean[] => foundBy(MultiPatternMatcher, patterns, text)

describe('MultiPatternMatcher', () => {
  it('respects word edges: a.ts is not in data.ts, 5ms not in 15ms, src/a.ts is in /app/src/a.ts:12', () => {
    expect(found(['a.ts', '5ms', 'ts'], 'data.ts took 15ms')).toEqual([false, false, true])
    expect(found(['src/a.ts', 'a.ts'], '/app/src/a.ts:12')).toEqual([true, true])
    expect(found(['.env', '-x', 'E'], 'a.env b-x E')).toEqual([true, true, true])
  })

  it('reports duplicates, nested patterns and patterns that only end where another fails', () => {
    // Punctuation only, so word edges never reject: this is the automaton alone.
    expect(found(['*-', '-+=', '+=#!', '*-+=', '*-', '!'], '#*-+=#')).toEqual([true, true, false, true, true, false])
    expect(found(['=-+#', '-+', '-+*'], '=-+*')).toEqual([false, true, true])
  })

  it('agrees with a naive search on random patterns and texts', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', '.', '/', ' ', '1', '_', 'é', '😀')
    const word = fc.array(alphabet, { minLength: 1, maxLength: 6 }).map((characters) => characters.join(''))
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 12 }),
        fc.array(alphabet, { maxLength: 80 }).map((characters) => characters.join('')),
        (patterns, text) => {
          expect(found(patterns, text)).toEqual(patterns.map((pattern) => naive(pattern, text)))
          // The few-patterns path (one indexOf each) counts an occurrence the same way.
          expect(patterns.map((pattern) => occursAsWord(text, pattern))).toEqual(
            patterns.map((pattern) => naive(pattern, text)),
          )
        },
      ),
      { numRuns: 400 },
    )
  })
})
