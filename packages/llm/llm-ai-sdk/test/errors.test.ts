import type { StreamChunk } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import type { Reply } from '@warmfold/test-utils'
import { NamedEvent } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { Harness, Kind } from './fixture.ts'
import { mount, request, TEST_KEY, WIRE_MODEL } from './fixture.ts'
import { anthropicError, anthropicStream, chatChunk, chatContent, chatStream } from './sse.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.finish()
})

async function harness(
  kind: Kind,
  responder: Parameters<typeof mount>[1],
  config: Record<string, unknown> = {},
): Promise<Harness> {
  const created = await mount(kind, responder, { maxRetries: 0, ...config })
  harnesses.push(created)
  return created
}

const openaiError = (message: string, type: string, code: string | null = null) => ({
  error: { message, type, param: null, code },
})
const body = (kind: Kind, message: string, type: string) =>
  kind === 'compat' ? openaiError(message, type) : anthropicError(type, message)
const ok = (kind: Kind) =>
  kind === 'compat'
    ? { sse: chatStream(WIRE_MODEL.compat, { text: 'ok' }) }
    : { sse: anthropicStream({ blocks: [{ type: 'text', text: 'ok' }] }), done: false }

describe.each(['compat', 'anthropic'] as const)('error mapping through the %s provider', (kind) => {
  it('maps 401 to AUTH, not retried, naming the status and the server message', async () => {
    const server = await harness(
      kind,
      () => ({ status: 401, body: body(kind, 'invalid x-api-key', 'authentication_error') }),
      { maxRetries: 2 },
    )
    const error = await server.failure()
    expect(error).toMatchObject({ code: 'AUTH', status: 401, retryable: false, provider: 'ai' })
    expect(error.message).toContain('HTTP 401')
    expect(error.message).toContain('invalid x-api-key')
    expect(server.server.requests).toHaveLength(1)
  })

  it('maps 429 to RATE_LIMITED with retry-after, and retries it before any output', async () => {
    const server = await harness(
      kind,
      (_, index) =>
        index === 0
          ? { status: 429, body: body(kind, 'slow down', 'rate_limit_error'), headers: { 'retry-after': '0' } }
          : ok(kind),
      { maxRetries: 1 },
    )
    const chunks = await server.collect()
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(server.server.requests).toHaveLength(2)
    const single = await harness(kind, () => ({
      status: 429,
      body: body(kind, 'slow down', 'rate_limit_error'),
      headers: { 'retry-after': '7' },
    }))
    expect(await single.failure()).toMatchObject({
      code: 'RATE_LIMITED',
      status: 429,
      retryable: true,
      retryAfterSeconds: 7,
    })
  })

  it('hands a 429 whose retry-after outlasts deadlineMs to the caller as RATE_LIMITED with the retry-after, not as a TIMEOUT', async () => {
    const server = await harness(
      kind,
      () => ({ status: 429, body: body(kind, 'slow down', 'rate_limit_error'), headers: { 'retry-after': '30' } }),
      { maxRetries: 2, deadlineMs: 3_000 },
    )
    const error = await server.failure()
    expect(error).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 30, retryable: true })
    expect(error.message).toMatch(
      /\(not retried: waiting 30000 ms for the next attempt would outlast the call's deadline \(\d+ ms left\)\)$/,
    )
    expect(server.server.requests).toHaveLength(1)
  })

  it('maps 408 (the server gave up waiting for the request) to a retryable TIMEOUT, and retries it', async () => {
    const once = await harness(kind, () => ({ status: 408, body: body(kind, 'Request timed out', 'timeout_error') }))
    expect(await once.failure()).toMatchObject({ code: 'TIMEOUT', status: 408, retryable: true })
    const server = await harness(
      kind,
      (_, index) => (index === 0 ? { status: 408, body: body(kind, 'Request timed out', 'timeout_error') } : ok(kind)),
      { maxRetries: 1 },
    )
    expect((await server.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(server.server.requests).toHaveLength(2)
  })

  it('maps a 400 that reports a prompt over the context window to CONTEXT_WINDOW_EXCEEDED', async () => {
    const message =
      kind === 'compat'
        ? "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."
        : 'prompt is too long: 210000 tokens > 200000 maximum'
    const server = await harness(kind, () => ({ status: 400, body: body(kind, message, 'invalid_request_error') }))
    expect(await server.failure()).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400, retryable: false })
  })

  it('maps another 400 to INVALID_REQUEST and 5xx to a retryable SERVER error', async () => {
    const bad = await harness(kind, () => ({
      status: 400,
      body: body(kind, 'messages: field required', 'invalid_request_error'),
    }))
    expect(await bad.failure()).toMatchObject({ code: 'INVALID_REQUEST', status: 400, retryable: false })
    const down = await harness(
      kind,
      (_, index) => (index < 2 ? { status: 503, body: body(kind, 'overloaded', 'api_error') } : ok(kind)),
      { maxRetries: 2 },
    )
    expect((await down.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(down.server.requests).toHaveLength(3)
    const gone = await harness(kind, () => ({ status: 500, body: body(kind, 'boom', 'api_error') }))
    expect(await gone.failure()).toMatchObject({ code: 'SERVER', status: 500, retryable: true })
  })

  it('maps a refused connection to a retryable NETWORK error', async () => {
    const server = await harness(kind, () => ({ destroy: true }))
    expect(await server.failure()).toMatchObject({ code: 'NETWORK', retryable: true })
  })

  it('maps an abort to ABORTED', async () => {
    const server = await harness(kind, () => ({ hang: true }))
    const controller = new AbortController()
    const failing = server.failure({ signal: controller.signal })
    await new Promise<void>((resolve) => {
      const wait = () => (server.server.requests.length ? resolve() : setImmediate(wait))
      wait()
    })
    controller.abort()
    expect(await failing).toMatchObject({ code: 'ABORTED', retryable: false })
  })

  it('never lets the key out: a server that echoes it in the error body, a header and usage.raw', async () => {
    const echo = `invalid key ${TEST_KEY} for this project`
    const server = await harness(kind, () => ({ status: 401, body: body(kind, echo, 'authentication_error') }))
    const error = await server.failure()
    const everything = JSON.stringify({
      message: error.message,
      stack: error.stack,
      cause: String(error.cause),
      own: Object.entries(error),
    })
    expect(everything).not.toContain(TEST_KEY)
    expect(error.message).toContain('[redacted]')
    const usageEcho = await harness(kind, () =>
      kind === 'compat'
        ? {
            sse: chatStream(
              WIRE_MODEL.compat,
              { text: 'ok' },
              { prompt_tokens: 3, completion_tokens: 1, echo: TEST_KEY },
            ),
          }
        : {
            sse: anthropicStream({
              blocks: [{ type: 'text', text: 'ok' }],
              startUsage: { input_tokens: 3, output_tokens: 1, echo: TEST_KEY },
            }),
            done: false,
          },
    )
    const chunks = await usageEcho.collect()
    expect(JSON.stringify(chunks)).not.toContain(TEST_KEY)
    expect(JSON.stringify(chunks)).toContain('[redacted]')
  })
})

describe('an error event mid-stream', () => {
  it('OpenAI-compatible: by its code when that is an HTTP status (OpenRouter 429, vLLM 400), else by its type', async () => {
    const cases: Array<[object, string]> = [
      [{ code: 429, message: 'Rate limit exceeded: upstream provider is busy' }, 'RATE_LIMITED'],
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
      [{ code: 502, message: 'Provider disconnected unexpectedly' }, 'SERVER'],
      [{ message: 'the engine overloaded', type: 'server_error' }, 'SERVER'],
    ]
    for (const [error, code] of cases) {
      const server = await harness('compat', () => ({
        sse: [...chatContent(WIRE_MODEL.compat, { text: 'partial' }), { error }],
      }))
      expect(await server.failure()).toMatchObject({ code })
      expect(server.server.requests).toHaveLength(1)
    }
  })

  it('Anthropic overloaded_error before any output is SERVER and retried', async () => {
    const [start] = anthropicStream({ blocks: [] })
    const server = await harness(
      'anthropic',
      (_, index) =>
        index === 0
          ? { sse: [start!, new NamedEvent('error', anthropicError('overloaded_error', 'Overloaded'))], done: false }
          : ok('anthropic'),
      { maxRetries: 1 },
    )
    expect((await server.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(server.server.requests).toHaveLength(2)
  })
})

describe.each(['compat', 'anthropic'] as const)('a connection lost mid-response through the %s provider', (kind) => {
  // Sent before the socket is cut. Before output: headers and an event that yields nothing (the
  // Anthropic message_start, a chat chunk with an empty delta). After output: a text delta too.
  const head = (): Extract<Reply, { sse: unknown }>['sse'] =>
    kind === 'compat' ? [chatChunk(WIRE_MODEL.compat, {})] : anthropicStream({ blocks: [] }).slice(0, 1)
  const started = (): Extract<Reply, { sse: unknown }>['sse'] =>
    kind === 'compat'
      ? chatContent(WIRE_MODEL.compat, { text: 'partial reply' })
      : anthropicStream({ blocks: [{ type: 'text', text: 'partial reply' }] }).slice(0, 4)

  it('before any output: a retryable NETWORK error naming the lost connection, not INVALID_RESPONSE', async () => {
    let server: Harness | undefined
    server = await harness(kind, (_request, index) => {
      // Cut once the headers and the first event are on the wire.
      setImmediate(() => server!.server.cut(index))
      return { sse: head(), done: false, hold: true }
    })
    const error = await server.failure()
    expect(error).toMatchObject({ code: 'NETWORK', retryable: true, provider: 'ai' })
    expect(error.message).toMatch(
      /^the connection to ai\/main was lost mid-response \(HTTP 200\): .*terminated: other side closed \(UND_ERR_SOCKET\)$/,
    )
    expect(server.server.requests).toHaveLength(1)
  })

  it('before any output: retried, and the retry completes the reply', async () => {
    let server: Harness | undefined
    server = await harness(
      kind,
      (_request, index) => {
        if (index > 0) return ok(kind)
        setImmediate(() => server!.server.cut(index))
        return { sse: head(), done: false, hold: true }
      },
      { maxRetries: 1 },
    )
    const chunks = await server.collect()
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(server.server.requests).toHaveLength(2)
  })

  it('after output: NETWORK, not retried (a retry would repeat the text already streamed)', async () => {
    const server = await harness(kind, () => ({ sse: started(), done: false, hold: true }), { maxRetries: 2 })
    const chunks: StreamChunk[] = []
    let caught: unknown
    try {
      for await (const chunk of server.ctx.llm.stream(request())) {
        chunks.push(chunk)
        if (chunk.type === 'text-delta') server.server.cut(0)
      }
    } catch (error) {
      caught = error
    }
    expect(LlmError.isInstance(caught) && caught.code, String(caught)).toBe('NETWORK')
    expect(caught).toMatchObject({ retryable: true, provider: 'ai' })
    expect((caught as LlmError).message).toContain('terminated: other side closed (UND_ERR_SOCKET)')
    expect(chunks.some((chunk) => chunk.type === 'text-delta')).toBe(true)
    expect(server.server.requests).toHaveLength(1)
  })
})
