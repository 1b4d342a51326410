import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { stripTrailing, stripTrailingPunctuation } from '../src/clean-text.ts'
import { exitCodeOf } from '../src/exit-status.ts'
import { withoutPosition, withoutSentenceDots, withoutTrailingSlashes } from '../src/path-rules.ts'
import { trimUrl } from '../src/scan-line.ts'

// The loops that replaced regular expressions whose searches were quadratic (or exponential) in a
// run of the characters they strip, held to those expressions on random text of those characters.

/** Random text of `pieces`, short enough for the quadratic expressions. */
const textOf = (...pieces: string[]) =>
  fc.array(fc.constantFrom(...pieces), { maxLength: 24 }).map((parts) => parts.join(''))
const agree = (text: fc.Arbitrary<string>, loop: (text: string) => unknown, expression: (text: string) => unknown) =>
  fc.assert(
    fc.property(text, (value) => {
      expect(loop(value)).toEqual(expression(value))
    }),
    { numRuns: 2000 },
  )

/** trimUrl as it was: the counts of brackets made again for each bracket it drops. */
function trimUrlBefore(url: string): string {
  let text = url.replace(/[.,;:!?]+$/, '')
  for (const [open, close] of [
    ['(', ')'],
    ['[', ']'],
    ['{', '}'],
  ] as const) {
    while (text.endsWith(close) && text.split(open).length < text.split(close).length)
      text = text.slice(0, -1).replace(/[.,;:!?]+$/, '')
  }
  return text.endsWith('/') && !text.endsWith('://') ? text.slice(0, -1) : text
}

/** The last exit code as exitCodeOf found it before. */
const exitCodeBefore = (text: string) =>
  [
    ...text.matchAll(
      /\b(?:exit(?:ed)?(?: with)?(?: code| status)|exit_code|returncode|return code)\s*[:=]?\s*(-?\d{1,3})\b/gi,
    ),
  ].at(-1)?.[1]

describe('the linear loops agree with the expressions they replaced', () => {
  it('stripTrailing and stripTrailingPunctuation', () => {
    agree(textOf('a', '.', ',', ';', ':', '!', '?', ' ', '\t', '\u00a0', '+', '-'), stripTrailingPunctuation, (text) =>
      text.replace(/[\s.,;:!?]+$/, ''),
    )
    agree(
      textOf('a', '.', '+', '-', ' '),
      (text) => stripTrailing(text, '.+-'),
      (text) => text.replace(/[.+-]+$/, ''),
    )
  })

  it('withoutPosition, withoutSentenceDots and withoutTrailingSlashes', () => {
    agree(textOf('a', '1', '23', ':', '/', '.'), withoutPosition, (text) =>
      text
        .replace(/(?::\d+)+:.*$/, '')
        .replace(/(?::\d+)+:?$/, '')
        .replace(/:+$/, ''),
    )
    agree(textOf('a', '.', '/'), withoutSentenceDots, (text) => {
      while (text.endsWith('.') && !/(?:^|\/)\.\.?$/.test(text)) text = text.slice(0, -1)
      return text
    })
    agree(textOf('a', '/', '.'), withoutTrailingSlashes, (text) => text.replace(/(.)\/+$/, '$1'))
  })

  it('trimUrl', () => {
    agree(textOf('a', '/', '(', ')', '[', ']', '{', '}', '.', ',', '?', '://'), trimUrl, trimUrlBefore)
  })

  it('exitCodeOf', () => {
    agree(textOf('exit code', 'Exit status', ' ', ':', '=', '-', '1', '42', 'x'), exitCodeOf, (text) => {
      const code = exitCodeBefore(text)
      return code === undefined ? undefined : Number(code)
    })
  })
})
