import type { LlmErrorCode } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { adapterHarnesses, collect, expectLlmError, MODEL, request } from './fixture.ts'
import { chunk, openaiStream, openaiUsage } from './provider-streams.ts'
import type { Reply } from '@warmfold/test-utils'

const harness = adapterHarnesses()

const OK: Reply = { sse: openaiStream(MODEL, { text: 'ok' }, openaiUsage(10, 0, 1, 0)) }

describe('HTTP status mapping', () => {
  const cases: Array<[number, LlmErrorCode, boolean]> = [
    [400, 'INVALID_REQUEST', false],
    [404, 'INVALID_REQUEST', false],
    [413, 'INVALID_REQUEST', false],
    [422, 'INVALID_REQUEST', false],
    [401, 'AUTH', false],
    [403, 'AUTH', false],
    [408, 'TIMEOUT', true],
    [429, 'RATE_LIMITED', true],
    [500, 'SERVER', true],
    [502, 'SERVER', true],
    [503, 'SERVER', true],
  ]
  for (const [status, code, retryable] of cases) {
    it(`${status} → ${code}, naming the provider, the status and the server's message`, async () => {
      const server = await harness(
        () => ({ status, body: { error: { message: `the server says ${status}`, type: 'some_error', code: null } } }),
        { provider: 'acme', maxRetries: 0 },
      )
      const error = await expectLlmError(() => collect(server, request(server)), code)
      expect(error).toMatchObject({ status, provider: 'acme', retryable })
      expect(error.message).toContain('acme')
      expect(error.message).toContain(`HTTP ${status}`)
      expect(error.message).toContain(`the server says ${status}`)
      expect(server.server.requests).toHaveLength(1)
    })
  }

  it('retries a 408 (the server gave up waiting for the request) like every vendor SDK does, and recovers', async () => {
    const server = await harness(
      (_request, index) =>
        index === 0
          ? { status: 408, body: { error: { message: 'Request timed out.', type: 'timeout', code: null } } }
          : OK,
      { maxRetries: 1, retryBaseMs: 1 },
    )
    expect((await collect(server, request(server))).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(server.server.requests).toHaveLength(2)
  })

  it('maps an error event inside the stream by its code: an HTTP status like that status (OpenRouter 429, vLLM 400), OpenAI rate-limit words, else SERVER', async () => {
    const cases: Array<[object, LlmErrorCode]> = [
      // OpenRouter: a failure after the 200 arrives as { error: { code, message } } (its errors reference).
      [{ code: 429, message: 'Rate limit exceeded: upstream provider is busy' }, 'RATE_LIMITED'],
      [{ code: 502, message: 'Provider disconnected unexpectedly' }, 'SERVER'],
      // vLLM's error object, sent as an event once streaming has begun.
      [
        {
          object: 'error',
          message: 'temperature must be non-negative, got -1.',
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
        'INVALID_REQUEST',
      ],
      [
        { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' },
        'RATE_LIMITED',
      ],
      [{ message: 'the engine overloaded', type: 'server_error' }, 'SERVER'],
    ]
    for (const [error, code] of cases) {
      const server = await harness(() => ({ sse: [chunk(MODEL, { content: 'partial' }), { error }] }), {
        maxRetries: 2,
      })
      const failure = await expectLlmError(() => collect(server, request(server)), code)
      expect(failure.message).toContain('the server reported an error inside the response stream')
      expect(server.server.requests).toHaveLength(1)
    }
  })

  it('reads the message from every error body shape (OpenAI, older vLLM, FastAPI detail, plain text)', async () => {
    const bodies: Array<object | string> = [
      { error: { message: 'wrapped message' } },
      { object: 'error', message: 'top-level message', type: 'BadRequestError', param: null, code: 400 },
      { detail: 'detail message' },
      'plain text message',
      { error: 'string error message' },
    ]
    const server = await harness((_request, index) => ({ status: 400, body: bodies[index]! }))
    for (const expected of [
      'wrapped message',
      'top-level message',
      'detail message',
      'plain text message',
      'string error message',
    ]) {
      const error = await expectLlmError(() => collect(server, request(server)), 'INVALID_REQUEST')
      expect(error.message).toContain(expected)
    }
  })
})

describe('retries', () => {
  it('stops after maxRetries for 5xx (counted at the server) and throws the last error', async () => {
    const server = await harness(() => ({ status: 503, body: { error: { message: 'overloaded' } } }), { maxRetries: 2 })
    const error = await expectLlmError(() => collect(server, request(server)), 'SERVER')
    expect(error.status).toBe(503)
    expect(server.server.requests).toHaveLength(3)
  })

  it('stops after maxRetries for 429', async () => {
    const server = await harness(() => ({ status: 429, body: { error: { message: 'slow down' } } }), { maxRetries: 3 })
    await expectLlmError(() => collect(server, request(server)), 'RATE_LIMITED')
    expect(server.server.requests).toHaveLength(4)
  })

  it('recovers when a retry succeeds, and sends the same body every time', async () => {
    const server = await harness((_request, index) => (index < 2 ? { status: 500, body: 'boom' } : OK), {
      maxRetries: 2,
    })
    const chunks = await collect(server, request(server))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(server.server.requests).toHaveLength(3)
    expect(new Set(server.server.requests.map((recorded) => recorded.body)).size).toBe(1)
  })

  it('never retries 4xx (other than 429) or context errors', async () => {
    const server = await harness(() => ({ status: 400, body: { error: { message: 'bad temperature' } } }), {
      maxRetries: 5,
    })
    await expectLlmError(() => collect(server, request(server)), 'INVALID_REQUEST')
    expect(server.server.requests).toHaveLength(1)
  })

  it('retries a dropped connection (NETWORK) within the same bound', async () => {
    const server = await harness(() => ({ destroy: true }), { maxRetries: 2 })
    const error = await expectLlmError(() => collect(server, request(server)), 'NETWORK')
    expect(error.message).toContain(server.server.baseURL)
    expect(server.server.requests).toHaveLength(3)
  })

  it('maxRetries 0 sends exactly one request', async () => {
    const server = await harness(() => ({ status: 503, body: 'down' }), { maxRetries: 0 })
    await expectLlmError(() => collect(server, request(server)), 'SERVER')
    expect(server.server.requests).toHaveLength(1)
  })

  it('hands a retry-after longer than maxRetryWaitMs to the caller as RATE_LIMITED with the retry-after, instead of retrying early', async () => {
    const server = await harness(() => ({ status: 429, body: 'wait', headers: { 'retry-after': '3600' } }), {
      maxRetries: 2,
      maxRetryWaitMs: 50,
    })
    const error = await expectLlmError(() => collect(server, request(server)), 'RATE_LIMITED')
    expect(error).toMatchObject({ status: 429, retryAfterSeconds: 3600, retryable: true })
    expect(error.message).toContain(
      '(not retried: the server asks to wait 3600 s (retry-after), longer than the adapter waits (0.05 s); retry after that)',
    )
    expect(server.server.requests).toHaveLength(1)
  })

  it('hands a 429 whose retry-after outlasts deadlineMs to the caller as RATE_LIMITED with the retry-after, not as a TIMEOUT', async () => {
    const server = await harness(() => ({ status: 429, body: 'wait', headers: { 'retry-after': '30' } }), {
      maxRetries: 2,
      deadlineMs: 3_000,
    })
    const error = await expectLlmError(() => collect(server, request(server)), 'RATE_LIMITED')
    expect(error).toMatchObject({ status: 429, retryAfterSeconds: 30, retryable: true })
    expect(error.message).toMatch(
      /\(not retried: waiting 30000 ms for the next attempt would outlast the call's deadline \(\d+ ms left\)\)$/,
    )
    expect(server.server.requests).toHaveLength(1)
  })
})

describe('aborts and timeouts', () => {
  it('an abort mid-stream stops the stream with ABORTED (the server keeps the connection open)', async () => {
    const server = await harness(() => ({
      sse: [chunk(MODEL, { content: 'first' }), chunk(MODEL, { content: ' second' })],
      done: false,
      hold: true,
    }))
    const controller = new AbortController()
    const seen: string[] = []
    await expectLlmError(async () => {
      for await (const part of server.ctx.llm.stream(request(server, { signal: controller.signal }))) {
        seen.push(part.type)
        if (part.type === 'text-delta') controller.abort(new Error('the user pressed escape'))
      }
    }, 'ABORTED')
    expect(seen).toContain('text-delta')
    expect(seen).not.toContain('finish')
  })

  it('a consumer that stops reading early closes the HTTP stream', async () => {
    const server = await harness(() => ({ sse: [chunk(MODEL, { content: 'first' })], done: false, hold: true }))
    for await (const part of server.ctx.llm.stream(request(server))) if (part.type === 'text-delta') break
    while (server.server.openResponses > 0) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(server.server.requests).toHaveLength(1)
  })

  it('an abort before the response headers rejects with ABORTED', async () => {
    const server = await harness(() => ({ hang: true }))
    const controller = new AbortController()
    const pending = collect(server, request(server, { signal: controller.signal }))
    while (server.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    controller.abort()
    await expectLlmError(() => pending, 'ABORTED')
  })

  it('an abort during a retry wait rejects with ABORTED and sends nothing more', async () => {
    const server = await harness(() => ({ status: 503, body: 'down', headers: { 'retry-after': '30' } }), {
      maxRetries: 3,
    })
    const controller = new AbortController()
    const pending = collect(server, request(server, { signal: controller.signal }))
    while (server.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    controller.abort()
    await expectLlmError(() => pending, 'ABORTED')
    expect(server.server.requests).toHaveLength(1)
  })

  it('no response headers within timeoutMs → TIMEOUT (not retried)', async () => {
    const server = await harness(() => ({ hang: true }), { timeoutMs: 100, maxRetries: 2 })
    const error = await expectLlmError(() => collect(server, request(server)), 'TIMEOUT')
    expect(error.message).toContain('100 ms')
    expect(server.server.requests).toHaveLength(1)
  })

  it('a stream that stalls for timeoutMs → TIMEOUT', async () => {
    const server = await harness(() => ({ sse: [chunk(MODEL, { content: 'first' })], done: false, hold: true }), {
      timeoutMs: 150,
    })
    const error = await expectLlmError(() => collect(server, request(server)), 'TIMEOUT')
    expect(error.message).toContain('150 ms')
  })
})
