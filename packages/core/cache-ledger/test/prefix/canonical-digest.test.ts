import { canonicalJson } from '@warmfold/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalDigest } from '../../src/prefix/index.ts'

/** Strings with the characters JSON escapes: quotes, backslashes, control characters, lone and paired surrogates. */
const trickyString = fc.string({
  unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '\t', '\u0001', '\u001f', '\u2028', '\ud83d', '\ude00', '😀', ' '),
  maxLength: 40,
})
const anyString = fc.oneof(
  trickyString,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ minLength: 300, maxLength: 1500 }),
)
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    anyString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(anyString, tie('value'), { maxKeys: 4 }),
  ),
})).value

/**
 * The length of canonical JSON text with each escape sequence counted as the one character it
 * stands for: `\uXXXX` is six characters, every other escape two.
 */
function unescapedLength(json: string): number {
  let length = json.length
  for (let index = json.indexOf('\\'); index !== -1; index = json.indexOf('\\', index)) {
    const size = json[index + 1] === 'u' ? 6 : 2
    length -= size - 1
    index += size
  }
  return length
}

describe('canonicalDigest: canonicalJson without rendering it', () => {
  it('counts the characters of canonicalJson, each escape as the one character it stands for', () => {
    fc.assert(
      fc.property(jsonValue, (value) => canonicalDigest(value).chars === unescapedLength(canonicalJson(value))),
      { numRuns: 500 },
    )
    expect(canonicalDigest({ text: 'a\nb"' }).chars).toBe('{"text":"a\nb""}'.length)
  })

  it('hashes equal canonical JSON alike and different canonical JSON differently', () => {
    fc.assert(
      fc.property(
        jsonValue,
        jsonValue,
        (left, right) =>
          (canonicalDigest(left).hash === canonicalDigest(right).hash) ===
          (canonicalJson(left) === canonicalJson(right)),
      ),
      { numRuns: 500 },
    )
  })

  it('ignores key order and undefined members, as canonicalJson does', () => {
    expect(canonicalDigest({ b: 1, a: [undefined, 'x'], c: undefined })).toEqual(
      canonicalDigest({ a: [null, 'x'], b: 1 }),
    )
  })

  it('tells apart strings that differ only in a lone surrogate (which UTF-8 would blur)', () => {
    expect(canonicalDigest('\ud800x').hash).not.toBe(canonicalDigest('\ud801x').hash)
    expect(canonicalDigest(`${'a'.repeat(300)}\ud800`).hash).not.toBe(canonicalDigest(`${'a'.repeat(300)}\ud801`).hash)
    expect(canonicalDigest(`${'a'.repeat(300)}\ud800`).hash).not.toBe(canonicalDigest(`${'a'.repeat(300)}\ufffd`).hash)
  })

  it('refuses what JSON cannot represent, naming the path', () => {
    expect(() => canonicalDigest({ a: [1, Number.NaN] })).toThrow(
      'canonicalDigest: $.a[1] is NaN, which JSON cannot represent',
    )
    expect(() => canonicalDigest({ when: new Date(0) })).toThrow(
      'canonicalDigest: $.when is a Date, which JSON cannot represent losslessly',
    )
  })
})
