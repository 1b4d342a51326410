import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { HEADLINE_RULES, MAY_HOLD_HEADLINE } from '../src/error-headlines.ts'
import { CORPUS_FOLDER, loadCorpus } from './corpus-sample.ts'

const matchedByARule = (line: string): boolean => HEADLINE_RULES.some((rule) => rule.pattern.test(line))

/** Every string value inside `value` (block texts, tool results, tool-call arguments). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.flatMap(strings)
  return value !== null && typeof value === 'object' ? Object.values(value).flatMap(strings) : []
}

/** Every line of every message of the labelled corpus and the held-out samples. */
function corpusLines(): string[] {
  const lines: string[] = []
  for (const folder of [CORPUS_FOLDER, join(CORPUS_FOLDER, '..', 'held-out')]) {
    for (const sample of loadCorpus(folder)) {
      for (const { message } of sample.messages)
        lines.push(...strings(message.content).flatMap((text) => text.split('\n')))
    }
  }
  return lines
}

describe('MAY_HOLD_HEADLINE, the search that lets most lines skip the headline rules', () => {
  it('finds every line of the corpus a rule matches', () => {
    const lines = corpusLines()
    const matched = lines.filter(matchedByARule)
    // The corpus has error lines of every kind, and far more lines without one.
    expect(matched.length).toBeGreaterThan(50)
    expect(matched.filter((line) => !MAY_HOLD_HEADLINE.test(line))).toEqual([])
    expect(lines.filter((line) => MAY_HOLD_HEADLINE.test(line)).length).toBeLessThan(lines.length / 2)
  })

  it('finds every random line a rule matches', () => {
    // Lines built from the rules' own words and shapes, so that rules do match some of them.
    const piece = fc.constantFrom(
      'error',
      'Error',
      'ERROR',
      'error TS2322: x',
      'fatal: x',
      'FAIL',
      'FAILED x',
      'panic: x',
      "thread 'main' panicked at x",
      'TypeError: x',
      'Exception',
      'ERR_PNPM_X y',
      'main.go:3: x',
      'a.py:3:8: F401 x',
      '●',
      'Module not found: x',
      'CONFLICT (x',
      'x: command not found',
      'a: b: No such file or directory',
      'make: *** x',
      'FAILURE: x',
      '##[error]x',
      '[ERROR] x',
      'FATAL: x',
      'CRITICAL x',
      'Build failed',
      '  14:7  error  x',
      ' ',
      ':',
      '1',
      'x',
      '\t',
      '2025-06-05 08:15:03.902 UTC [64] ',
    )
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 5 }).map((pieces) => pieces.join('')),
        (line) => {
          if (matchedByARule(line)) expect(MAY_HOLD_HEADLINE.test(line)).toBe(true)
        },
      ),
      { numRuns: 3000 },
    )
  })
})
