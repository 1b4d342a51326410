import { describe, expect, it } from 'vitest'
import { LlmError } from '../src/index.ts'
import { MAX_RETRY_AFTER_SECONDS, nextRetry, retryStream } from '../src/retry-stream.ts'
import { parseRetryAfter } from '../src/parse-retry-after.ts'
import { withIdleTimeout } from '../src/idle-timeout.ts'

const rateLimited = (retryAfterSeconds?: number) =>
  new LlmError('RATE_LIMITED', 'slow down', { retryAfterSeconds, retryable: true })
const now = Date.parse('2026-01-01T00:00:00Z')

/** The wait `nextRetry` picks before retry `retry` of a retryable error; `undefined` when it hands the error over. */
function streamRetryDelayMs(
  retry: number,
  error: LlmError,
  retryBaseMs: number,
  limits: { maxWaitMs?: number; remainingMs?: number } = {},
): number | undefined {
  const { maxWaitMs, remainingMs } = limits
  const step = nextRetry(retry, error, {
    maxRetries: Number.POSITIVE_INFINITY,
    retryBaseMs,
    ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
    ...(remainingMs === undefined ? {} : { remainingMs: () => remainingMs }),
  })
  return 'waitMs' in step ? step.waitMs : undefined
}

describe('parseRetryAfter', () => {
  it('reads retry-after-ms first, then delay-seconds or an HTTP date (a past date is 0)', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(0.25)
    expect(parseRetryAfter(new Headers({ 'retry-after': '12' }), now)).toBe(12)
    expect(parseRetryAfter(new Headers({ 'retry-after': '2.5' }), now)).toBe(2.5)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(30)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }), now)).toBe(0)
  })

  it('is undefined for no header, a word, or a negative number (never a year-5 date)', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined()
    expect(parseRetryAfter(new Headers({}), now)).toBeUndefined()
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined()
    expect(parseRetryAfter(new Headers({ 'retry-after': '-5' }), now)).toBeUndefined()
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '-5' }), now)).toBeUndefined()
  })
})

describe('retryStream', () => {
  it('waits retry-after when given, else doubles retryBaseMs, and hands a wait over the cap to the caller', () => {
    expect([0, 1, 2].map((retry) => streamRetryDelayMs(retry, rateLimited(), 500))).toEqual([500, 1000, 2000])
    expect(streamRetryDelayMs(3, rateLimited(2.5), 500)).toBe(2500)
    expect(streamRetryDelayMs(0, rateLimited(MAX_RETRY_AFTER_SECONDS + 1), 500)).toBeUndefined()
  })

  it('caps the backoff at maxWaitMs, hands a longer retry-after over, and starts no wait the deadline would cut short', () => {
    expect(streamRetryDelayMs(10, rateLimited(), 500)).toBe(MAX_RETRY_AFTER_SECONDS * 1000)
    expect(streamRetryDelayMs(10, rateLimited(), 500, { maxWaitMs: 2000 })).toBe(2000)
    expect(streamRetryDelayMs(0, rateLimited(3), 500, { maxWaitMs: 2000 })).toBeUndefined()
    expect(streamRetryDelayMs(0, rateLimited(1), 500, { remainingMs: 1500 })).toBe(1000)
    expect(streamRetryDelayMs(0, rateLimited(1), 500, { remainingMs: 1000 })).toBeUndefined()
    expect(streamRetryDelayMs(2, rateLimited(), 500, { remainingMs: 1500 })).toBeUndefined()
  })

  it('nextRetry hands a RATE_LIMITED the adapter will not wait for to the caller, keeping its retry-after and saying why', () => {
    const policy = { maxRetries: 2, retryBaseMs: 500 }
    expect(nextRetry(0, rateLimited(2), policy)).toEqual({ waitMs: 2000 })
    const tooLong = nextRetry(0, rateLimited(3600), policy)
    expect('error' in tooLong && tooLong.error).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterSeconds: 3600,
      message:
        'slow down (not retried: the server asks to wait 3600 s (retry-after), longer than the adapter waits (60 s); retry after that)',
    })
    const late = nextRetry(1, rateLimited(5), { ...policy, remainingMs: () => 4000 })
    expect('error' in late && late.error).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterSeconds: 5,
      message:
        "slow down (gave up after 2 attempts: waiting 5000 ms for the next attempt would outlast the call's deadline (4000 ms left))",
    })
    const spent = nextRetry(2, rateLimited(1), policy)
    expect('error' in spent && spent.error.message).toBe('slow down (gave up after 3 attempts)')
    const final = new LlmError('AUTH', 'bad key', { retryable: false })
    expect(nextRetry(0, final, policy)).toEqual({ error: final })
  })

  it('reopens after a retryable failure before any item, and says how many attempts a final failure took', async () => {
    const opened: number[] = []
    const items: string[] = []
    const stream = retryStream(
      async function* (attempt) {
        opened.push(attempt)
        if (attempt < 2) throw rateLimited(0)
        yield 'ok'
      },
      { maxRetries: 2, retryBaseMs: 0, mapError: (error) => error as LlmError },
    )
    for await (const item of stream) items.push(item)
    expect(opened).toEqual([0, 1, 2])
    expect(items).toEqual(['ok'])
    const failing = retryStream(
      async function* () {
        yield* []
        throw rateLimited(0)
      },
      { maxRetries: 1, retryBaseMs: 0, mapError: (error) => error as LlmError },
    )
    await expect(failing.next()).rejects.toThrow('slow down (gave up after 2 attempts)')
  })

  it('never retries once an item reached the caller: a retry would duplicate output', async () => {
    let opens = 0
    const stream = retryStream(
      async function* () {
        opens++
        yield 'first'
        throw rateLimited(0)
      },
      { maxRetries: 3, retryBaseMs: 0, mapError: (error) => error as LlmError },
    )
    const seen: string[] = []
    await expect(
      (async () => {
        for await (const item of stream) seen.push(item)
      })(),
    ).rejects.toMatchObject({ code: 'RATE_LIMITED' })
    expect(seen).toEqual(['first'])
    expect(opens).toBe(1)
  })
})

describe('withIdleTimeout', () => {
  it("fails with the watch's error when the source stops making progress, and cancels it", async () => {
    // Like a real request, the source ends when it is cancelled: the abort rejects its read.
    let cancel: ((reason: Error) => void) | undefined
    let cancelled = false
    async function* stalled() {
      yield 'progress'
      yield 'ping'
      await new Promise((_, reject) => {
        cancel = reject
      })
    }
    const seen: string[] = []
    const watched = withIdleTimeout(stalled(), {
      timeoutMs: 20,
      isProgress: (item) => item !== 'ping',
      failure: () => new LlmError('TIMEOUT', 'no progress for 20 ms'),
      onTimeout: () => {
        cancelled = true
        cancel?.(new Error('aborted'))
      },
    })
    await expect(
      (async () => {
        for await (const item of watched) seen.push(item)
      })(),
    ).rejects.toThrow('no progress for 20 ms')
    expect(seen).toEqual(['progress', 'ping'])
    expect(cancelled).toBe(true)
  })
})
