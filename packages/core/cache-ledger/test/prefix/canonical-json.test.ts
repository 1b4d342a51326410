import { canonicalJson as llmCanonicalJson } from '@warmfold/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/prefix/index.ts'

/** JSON values with the characters JSON escapes, nulls and `undefined` members, as prompt data has them. */
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '\u0001', '\ud83d', '😀') }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(tie('value'), fc.constant(undefined)), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(tie('value'), fc.constant(undefined)), { maxKeys: 4 }),
  ),
})).value

describe('canonicalJson', () => {
  it('writes the bytes @warmfold/llm writes, so the simulator and the ledger render prompts as before', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(canonicalJson(value)).toBe(llmCanonicalJson(value))
      }),
      { numRuns: 500 },
    )
  })

  it('throws where @warmfold/llm throws: non-finite numbers, functions, class instances, cycles', () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    for (const value of [{ n: Number.NaN }, [Infinity], { f: () => 1 }, { at: new Date(0) }, cycle]) {
      expect(() => llmCanonicalJson(value)).toThrow(TypeError)
      expect(() => canonicalJson(value)).toThrow(TypeError)
    }
  })

  it('reads a wire body with `wire`: null members left out, an infinite parsed number written as null', () => {
    const body = JSON.parse('{"b":null,"a":[null,1e400],"c":{"d":null,"e":"x"}}') as unknown
    expect(canonicalJson(body, { wire: true })).toBe('{"a":[null,null],"c":{"e":"x"}}')
    expect(canonicalJson({ b: 1, a: null }, { wire: true })).toBe(canonicalJson({ a: undefined, b: 1 }))
    expect(() => canonicalJson(body)).toThrow(/\$\.a\[1\] is Infinity/)
  })
})
