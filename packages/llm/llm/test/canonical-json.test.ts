import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../src/index.ts'

/** Rebuilds `value` with every object's keys inserted in an order chosen by `nextInt`. */
function permuteKeys(value: unknown, nextInt: () => number): unknown {
  if (Array.isArray(value)) return value.map((item) => permuteKeys(item, nextInt))
  if (value === null || typeof value !== 'object') return value
  const entries = Object.entries(value)
  for (let index = entries.length - 1; index > 0; index--) {
    const other = nextInt() % (index + 1)
    ;[entries[index], entries[other]] = [entries[other]!, entries[index]!]
  }
  // Object.fromEntries defines own properties, so a "__proto__" key stays a plain key.
  return Object.fromEntries(entries.map(([key, child]) => [key, permuteKeys(child, nextInt)]))
}

/** A small deterministic generator, so one fast-check seed gives one permutation. */
function numbers(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state >>> 8
  }
}

describe('canonicalJson', () => {
  it('sorts keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}',
    )
  })

  it('sorts keys by code unit, not in the engine order that puts integer-like keys first', () => {
    const value = { b: 1, 10: 2, 9: 3, B: 4 }
    expect(Object.keys(value)).toEqual(['9', '10', 'b', 'B'])
    expect(canonicalJson(value)).toBe('{"10":2,"9":3,"B":4,"b":1}')
  })

  it('gives the same bytes whatever order the keys were inserted in', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (value, seed) => {
        expect(canonicalJson(permuteKeys(value, numbers(seed)))).toBe(canonicalJson(value))
      }),
    )
  })

  it('parses back to the same data as a JSON round trip', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(canonicalJson(value))).toStrictEqual(JSON.parse(JSON.stringify(value)))
      }),
    )
  })

  it('is idempotent over parse and serialize', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const bytes = canonicalJson(value)
        expect(canonicalJson(JSON.parse(bytes))).toBe(bytes)
      }),
    )
  })

  it('drops undefined members and writes undefined array items and holes as null, like JSON.stringify', () => {
    const sparse = [1, , 3] // eslint-disable-line no-sparse-arrays
    const value = { kept: 1, dropped: undefined, list: [undefined, 2], sparse }
    expect(canonicalJson(value)).toBe('{"kept":1,"list":[null,2],"sparse":[1,null,3]}')
    expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)))
  })

  it('accepts a value shared by two members (only a cycle is an error)', () => {
    const shared = { x: 1 }
    expect(canonicalJson({ a: shared, b: [shared] })).toBe('{"a":{"x":1},"b":[{"x":1}]}')
  })

  it.each([
    ['NaN', { a: [1, Number.NaN] }, '$.a[1] is NaN'],
    ['Infinity', { a: { b: Number.POSITIVE_INFINITY } }, '$.a.b is Infinity'],
    ['-Infinity', [Number.NEGATIVE_INFINITY], '$[0] is -Infinity'],
    ['a bigint', { count: 10n }, '$.count is a bigint'],
    ['a function', { list: [{ run: () => 1 }] }, '$.list[0].run is a function'],
    ['a symbol', { tag: Symbol('x') }, '$.tag is a symbol'],
  ])('rejects %s with a TypeError naming its path', (_label, value, message) => {
    expect(() => canonicalJson(value)).toThrow(TypeError)
    expect(() => canonicalJson(value)).toThrow(message)
  })

  it.each([
    ['a Date', { at: new Date(0) }, '$.at is a Date'],
    ['a Map', { index: [new Map()] }, '$.index[0] is a Map'],
    ['a class instance', { error: new RangeError('x') }, '$.error is a RangeError'],
  ])('rejects %s instead of silently serializing it, naming its path and kind', (_label, value, message) => {
    expect(() => canonicalJson(value)).toThrow(TypeError)
    expect(() => canonicalJson(value)).toThrow(message)
  })

  it('accepts an object without a prototype as plain data', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: 1 })
    expect(canonicalJson({ bare })).toBe('{"bare":{"a":1,"b":2}}')
  })

  it('rejects a cycle with a TypeError naming the path that closes it', () => {
    const root: { child: { items: unknown[] } } = { child: { items: [] } }
    root.child.items.push(root)
    expect(() => canonicalJson(root)).toThrow(TypeError)
    expect(() => canonicalJson(root)).toThrow('$.child.items[0] is a cycle')
  })
})
