import { describe, expect, it } from 'vitest'
import type { StreamChunk } from '../src/index.ts'
import { LlmError } from '../src/index.ts'
import { modelEntry, resilientStream } from '../src/resilient-stream.ts'

// The shared resilience of the HTTP adapters, driven by in-process event sources (the adapters'
// own tests drive it over real HTTP).

type Event = { readonly text: string } | 'ping'

function call(
  open: (signal: AbortSignal, attempt: number) => AsyncIterable<Event> | Promise<AsyncIterable<Event>>,
  overrides: { deadlineMs?: number; maxRetries?: number; timeoutMs?: number } = {},
) {
  return resilientStream<Event>({
    provider: 'p',
    model: 'm',
    maxRetries: overrides.maxRetries ?? 0,
    retryBaseMs: 0,
    timeoutMs: overrides.timeoutMs ?? 5_000,
    ...(overrides.deadlineMs === undefined ? {} : { deadlineMs: overrides.deadlineMs }),
    stallNote: ' (pings do not count)',
    open,
    progress: () => (event) => event !== 'ping',
    map: async function* (events) {
      for await (const event of events)
        if (event !== 'ping') yield { type: 'text-delta', index: 0, delta: event.text } satisfies StreamChunk
    },
    mapError: (error) =>
      LlmError.isInstance(error) ? error : new LlmError('NETWORK', String(error), { retryable: true }),
  })
}

async function drain(stream: AsyncIterable<StreamChunk>): Promise<{ chunks: StreamChunk[]; error?: LlmError }> {
  const chunks: StreamChunk[] = []
  try {
    for await (const chunk of stream) chunks.push(chunk)
    return { chunks }
  } catch (error) {
    return { chunks, error: error as LlmError }
  }
}

/** Never yields an event; ends when `signal` aborts, as a real request does. */
async function* silent(signal: AbortSignal): AsyncGenerator<Event> {
  yield* await new Promise<Event[]>((_, reject) =>
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
  )
}

describe('resilientStream', () => {
  it('reopens a failed attempt before any output and passes the attempt number', async () => {
    const attempts: number[] = []
    const { chunks, error } = await drain(
      call(
        async function* (_signal, attempt) {
          attempts.push(attempt)
          if (attempt === 0) throw new Error('connection reset')
          yield { text: 'ok' }
        },
        { maxRetries: 1 },
      ),
    )
    expect(error).toBeUndefined()
    expect(attempts).toEqual([0, 1])
    expect(chunks).toEqual([{ type: 'text-delta', index: 0, delta: 'ok' }])
  })

  it('fails a silent attempt with TIMEOUT naming timeoutMs and the stall note, cancelling it', async () => {
    let cancelled = false
    const { error } = await drain(
      call(
        (signal) => {
          signal.addEventListener('abort', () => (cancelled = true), { once: true })
          return silent(signal)
        },
        { timeoutMs: 30 },
      ),
    )
    expect(error?.code).toBe('TIMEOUT')
    expect(error?.message).toBe('p/m: no response or stream progress for timeoutMs (30 ms) (pings do not count)')
    expect(cancelled).toBe(true)
  })

  it('fails the whole call with TIMEOUT naming deadlineMs once it outlasts the deadline', async () => {
    const { error } = await drain(call((signal) => silent(signal), { deadlineMs: 30 }))
    expect(error?.code).toBe('TIMEOUT')
    expect(error?.message).toBe('p/m: the call did not finish within deadlineMs (30 ms)')
    expect(error?.retryable).toBe(false)
  })

  it('hands a 429 whose retry-after outlasts deadlineMs to the caller as RATE_LIMITED with the retry-after, instead of waiting into a TIMEOUT', async () => {
    let attempts = 0
    const { error } = await drain(
      call(
        async function* () {
          attempts++
          yield* []
          throw new LlmError('RATE_LIMITED', 'p/m: rate limited (HTTP 429)', { status: 429, retryAfterSeconds: 30 })
        },
        { deadlineMs: 300, maxRetries: 2 },
      ),
    )
    expect(error).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 30, retryable: true })
    expect(error?.message).toMatch(
      /^p\/m: rate limited \(HTTP 429\) \(not retried: waiting 30000 ms for the next attempt would outlast the call's deadline \(\d+ ms left\)\)$/,
    )
    expect(attempts).toBe(1)
  })

  it('still waits a retry-after that ends before deadlineMs, and retries', async () => {
    let attempts = 0
    const { chunks, error } = await drain(
      call(
        async function* () {
          attempts++
          if (attempts === 1) throw new LlmError('RATE_LIMITED', 'slow down', { status: 429, retryAfterSeconds: 0.01 })
          yield { text: 'ok' }
        },
        { deadlineMs: 5_000, maxRetries: 1 },
      ),
    )
    expect(error).toBeUndefined()
    expect(chunks).toEqual([{ type: 'text-delta', index: 0, delta: 'ok' }])
    expect(attempts).toBe(2)
  })
})

describe('modelEntry', () => {
  it('returns a configured model and names the known ones for another', () => {
    expect(modelEntry({ a: 1, b: 2 }, 'prov', 'b')).toBe(2)
    expect(() => modelEntry({ b: 2, a: 1 }, 'prov', 'c')).toThrow(
      'model "c" is not known to provider "prov"; known models: a, b',
    )
    expect(() => modelEntry({}, 'prov', 'c')).toThrow('known models: (none: configure it under models)')
    // Only own keys are models: an inherited name is unknown, not Object.prototype's function.
    expect(() => modelEntry({ a: 1 }, 'prov', 'hasOwnProperty')).toThrow('model "hasOwnProperty" is not known')
  })
})
