import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { collapseWhitespace } from '../src/clean-text.ts'

/** What `collapseWhitespace` must equal. */
const byRegExp = (text: string): string => text.replace(/\s+/g, ' ').trim()

describe('collapseWhitespace', () => {
  it('collapses every run of white space to one space and trims, keeping a lone space where it is', () => {
    expect(collapseWhitespace('  a\tb\n\n c  ')).toBe('a b c')
    expect(collapseWhitespace('a b c')).toBe('a b c')
    expect(collapseWhitespace('a\u00a0\u2028b\u3000\ufeffc')).toBe('a b c')
    expect(collapseWhitespace(' \n\t ')).toBe('')
    expect(collapseWhitespace('')).toBe('')
  })

  it("agrees with a regular expression's \\s and trim on random text, every white space code unit included", () => {
    const spaces = [
      ' ',
      '\t',
      '\n',
      '\v',
      '\f',
      '\r',
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u2005',
      '\u200a',
      '\u2028',
      '\u2029',
      '\u202f',
      '\u205f',
      '\u3000',
      '\ufeff',
    ]
    // Look-alikes that are not white space: zero-width space, Mongolian vowel separator, next line.
    const others = ['a', 'Z', '.', '\u200b', '\u180e', '\u0085', '\u00ad', '😀']
    const text = fc.array(fc.constantFrom(...spaces, ...others), { maxLength: 40 }).map((units) => units.join(''))
    fc.assert(
      fc.property(text, (value) => collapseWhitespace(value) === byRegExp(value)),
      { numRuns: 3000 },
    )
  })
})
