import { describe, expect, it } from 'vitest'
import type { ManualCompactionErrorCode } from '../src/index.ts'
import { CompactionInvariantError, ManualCompactionError } from '../src/index.ts'

const CODES: ManualCompactionErrorCode[] = ['busy', 'cancelled', 'changed', 'summary', 'commit', 'persistence']

describe('ManualCompactionError', () => {
  it.each(CODES)('carries code %s, its message and cause', (code) => {
    const cause = new Error('underlying')
    const error = new ManualCompactionError(code, `manual compaction failed: ${code}`, { cause })
    expect(ManualCompactionError.isInstance(error)).toBe(true)
    expect(error.code).toBe(code)
    expect(error.name).toBe('ManualCompactionError')
    expect(error.message).toBe(`manual compaction failed: ${code}`)
    expect(error.cause).toBe(cause)
    expect(error).toBeInstanceOf(Error)
  })

  it('recognises the brand, not the class: a copy from another package instance passes', () => {
    const fromOtherCopy = Object.assign(new Error('busy'), {
      name: 'ManualCompactionError',
      code: 'busy',
      [Symbol.for('warmfold.compaction.manual-error')]: true,
    })
    expect(ManualCompactionError.isInstance(fromOtherCopy)).toBe(true)
  })

  it('rejects look-alikes without the brand and non-objects', () => {
    const lookAlike = Object.assign(new Error('busy'), { name: 'ManualCompactionError', code: 'busy' })
    for (const value of [
      lookAlike,
      new Error('busy'),
      { code: 'busy' },
      null,
      undefined,
      'ManualCompactionError',
      42,
    ]) {
      expect(ManualCompactionError.isInstance(value)).toBe(false)
    }
    expect(ManualCompactionError.isInstance(new CompactionInvariantError('x'))).toBe(false)
  })
})

describe('CompactionInvariantError', () => {
  it('is recognised by its brand', () => {
    const error = new CompactionInvariantError('compaction invariant: x')
    expect(CompactionInvariantError.isInstance(error)).toBe(true)
    expect(error.name).toBe('CompactionInvariantError')
    expect(
      CompactionInvariantError.isInstance(
        Object.assign(new Error('x'), { [Symbol.for('warmfold.compaction.invariant-error')]: true }),
      ),
    ).toBe(true)
    expect(CompactionInvariantError.isInstance(new ManualCompactionError('busy', 'x'))).toBe(false)
    expect(CompactionInvariantError.isInstance(new Error('x'))).toBe(false)
    expect(CompactionInvariantError.isInstance(null)).toBe(false)
  })
})
