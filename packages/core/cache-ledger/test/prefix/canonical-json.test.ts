import { canonicalJson } from '@warmfold/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalWireJson } from '../../src/prefix/index.ts'

/** JSON values as `JSON.parse` gives them, with the characters JSON escapes, and no null members. */
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '\u0001', '\ud83d', '😀') }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.array(fc.oneof(tie('value'), fc.constant(null)), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 4 }),
  ),
})).value

describe('canonicalWireJson', () => {
  it("writes what @warmfold/llm's canonicalJson writes for a body without null members", () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(canonicalWireJson(value)).toBe(canonicalJson(value))
      }),
      { numRuns: 500 },
    )
  })

  it('leaves null members out (an API reads them as absent), whatever the key order', () => {
    const body = JSON.parse('{"b":null,"a":[null,1],"c":{"d":null,"e":"x"}}') as unknown
    expect(canonicalWireJson(body)).toBe('{"a":[null,1],"c":{"e":"x"}}')
    expect(canonicalWireJson({ b: 1, a: null })).toBe(canonicalWireJson({ b: 1 }))
    expect(canonicalWireJson({ y: [1, { z: 2, w: 3 }], x: 'x' })).toBe('{"x":"x","y":[1,{"w":3,"z":2}]}')
  })
})
