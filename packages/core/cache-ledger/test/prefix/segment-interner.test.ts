import { describe, expect, it } from 'vitest'
import { SegmentInterner } from '../../src/prefix/index.ts'

describe('SegmentInterner references', () => {
  it('keeps a text while someone holds it and forgets it after the last release, never reusing its id', () => {
    const interner = new SegmentInterner()
    const first = interner.intern('tool result')
    expect(interner.intern('tool result').id).toBe(first.id)
    expect(interner.size).toBe(1)
    interner.release(first.id)
    expect(interner.size).toBe(1)
    interner.release(first.id)
    expect(interner.size).toBe(0)
    const again = interner.intern('tool result')
    expect(again.id).not.toBe(first.id)
  })

  it('forgets long texts (interned by digest) too', () => {
    const interner = new SegmentInterner()
    const long = 'x'.repeat(20_000)
    const { id } = interner.intern(long)
    interner.release(id)
    expect(interner.size).toBe(0)
    expect(interner.intern(long).id).toBe(id + 1)
  })

  it('refuses a release without a reference, naming the id', () => {
    expect(() => new SegmentInterner().release(7)).toThrow('id 7 holds no reference')
  })
})
