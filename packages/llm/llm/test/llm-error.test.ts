import { describe, expect, it } from 'vitest'
import type { LlmErrorCode } from '../src/index.ts'
import { LlmError } from '../src/index.ts'

describe('LlmError', () => {
  it('isInstance is true for an LlmError', () => {
    const error = new LlmError('AUTH', 'bad key')
    expect(LlmError.isInstance(error)).toBe(true)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('LlmError')
  })

  it('isInstance is false for a plain Error carrying the same fields', () => {
    const lookalike = Object.assign(new Error('bad key'), { name: 'LlmError', code: 'AUTH', retryable: false })
    expect(LlmError.isInstance(lookalike)).toBe(false)
  })

  it('isInstance is true for an object carrying the shared brand, as another copy of the package would create', () => {
    const fromOtherCopy = Object.assign(new Error('bad key'), {
      code: 'AUTH',
      [Symbol.for('warmfold.llm.error')]: true,
    })
    expect(LlmError.isInstance(fromOtherCopy)).toBe(true)
  })

  it.each([null, undefined, 'LlmError', 42, { [Symbol.for('warmfold.llm.error')]: 'yes' }])(
    'isInstance is false for %s',
    (value) => {
      expect(LlmError.isInstance(value)).toBe(false)
    },
  )

  it.each<[LlmErrorCode, boolean]>([
    ['RATE_LIMITED', true],
    ['SERVER', true],
    ['NETWORK', true],
    ['TIMEOUT', true],
    ['AUTH', false],
    ['CONTEXT_WINDOW_EXCEEDED', false],
    ['ABORTED', false],
  ])('defaults retryable for %s to %s', (code, retryable) => {
    expect(new LlmError(code, 'x').retryable).toBe(retryable)
  })

  it('keeps the given options', () => {
    const cause = new Error('socket hang up')
    const error = new LlmError('RATE_LIMITED', 'slow down', {
      status: 429,
      provider: 'p',
      retryable: false,
      retryAfterSeconds: 3,
      cause,
    })
    expect(error).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'slow down',
      status: 429,
      provider: 'p',
      retryable: false,
      retryAfterSeconds: 3,
    })
    expect(error.cause).toBe(cause)
    expect('cause' in new LlmError('AUTH', 'x')).toBe(false)
  })
})
