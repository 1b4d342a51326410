import type { LlmErrorCode } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { AdapterHarness } from './adapter-fixture.ts'
import { mountAdapter } from './adapter-fixture.ts'
import { errorEvent, errorReply, failedEvent, replyEvents, streamReply } from './sse-script.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harness(...args: Parameters<typeof mountAdapter>): Promise<AdapterHarness> {
  const created = await mountAdapter(...args)
  harnesses.push(created)
  return created
}

const ok = () => streamReply({ items: [{ type: 'message', text: 'ok' }] })

describe('error mapping', () => {
  it.each<[number, string, string | null, string, LlmErrorCode, boolean]>([
    [
      400,
      'invalid_request_error',
      null,
      "Unsupported parameter: 'temperature' is not supported with this model.",
      'INVALID_REQUEST',
      false,
    ],
    [
      400,
      'invalid_request_error',
      'context_length_exceeded',
      'Your input exceeds the context window of this model. Please adjust your input and try again.',
      'CONTEXT_WINDOW_EXCEEDED',
      false,
    ],
    [401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.', 'AUTH', false],
    [403, 'invalid_request_error', null, 'Project does not have access to model gpt-test', 'AUTH', false],
    [408, 'timeout', null, 'Request timed out.', 'TIMEOUT', true],
    [
      429,
      'requests',
      'rate_limit_exceeded',
      'Rate limit reached for gpt-test on tokens per min (TPM)',
      'RATE_LIMITED',
      true,
    ],
    [500, 'server_error', null, 'The server had an error while processing your request.', 'SERVER', true],
    [503, 'server_error', null, 'The engine is currently overloaded, please try again later', 'SERVER', true],
  ])('HTTP %i %s/%s → %s', async (status, type, code, message, expected, retryable) => {
    const adapter = await harness(() => errorReply(status, type, code, message), { maxRetries: 0 })
    const error = await adapter.failure()
    expect(error).toMatchObject({ code: expected, status, provider: 'openai', retryable })
    expect(error.message).toContain('openai/gpt-test')
    expect(error.message).toContain(`HTTP ${status}`)
    expect(error.message).toContain(message)
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('retries 5xx up to maxRetries, recovers when a retry succeeds, and never retries a 400', async () => {
    const down = await harness(() => errorReply(500, 'server_error', null, 'boom'), { maxRetries: 2 })
    expect((await down.failure()).message).toMatch(/gave up after 3 attempts/)
    expect(down.server.requests).toHaveLength(3)
    const flaky = await harness(
      (_request, index) => (index === 0 ? errorReply(502, 'server_error', null, 'bad gateway') : ok()),
      { maxRetries: 2 },
    )
    expect((await flaky.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    const timedOut = await harness(
      (_request, index) => (index === 0 ? errorReply(408, 'timeout', null, 'Request timed out.') : ok()),
      { maxRetries: 1 },
    )
    expect((await timedOut.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(timedOut.server.requests).toHaveLength(2)
    const invalid = await harness(() => errorReply(400, 'invalid_request_error', null, 'bad'), { maxRetries: 2 })
    expect((await invalid.failure()).code).toBe('INVALID_REQUEST')
    expect(invalid.server.requests).toHaveLength(1)
  })

  it('honours retry-after on a 429 and reports it on the error', async () => {
    // The backoff would be 10 minutes; the test only finishes because retry-after (0 s) wins.
    const adapter = await harness(
      (_request, index) =>
        index === 0 ? errorReply(429, 'requests', 'rate_limit_exceeded', 'slow down', { 'retry-after': '0' }) : ok(),
      { maxRetries: 1, retryBaseMs: 600_000 },
    )
    expect((await adapter.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests).toHaveLength(2)
    const once = await harness(
      () => errorReply(429, 'requests', 'rate_limit_exceeded', 'slow down', { 'retry-after': '7' }),
      { maxRetries: 0 },
    )
    expect(await once.failure()).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 7 })
  })

  it('hands a 429 whose retry-after outlasts deadlineMs to the caller as RATE_LIMITED with the retry-after, not as a TIMEOUT', async () => {
    const adapter = await harness(
      () => errorReply(429, 'requests', 'rate_limit_exceeded', 'slow down', { 'retry-after': '30' }),
      { maxRetries: 2, deadlineMs: 3_000 },
    )
    const error = await adapter.failure()
    expect(error).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 30, retryable: true })
    expect(error.message).toMatch(
      /\(not retried: waiting 30000 ms for the next attempt would outlast the call's deadline \(\d+ ms left\)\)$/,
    )
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('maps an error event and response.failed by code, retrying only before output', async () => {
    const early = await harness(
      (_request, index) =>
        index === 0
          ? {
              done: false,
              sse: [...replyEvents({ items: [] }).slice(0, 2), errorEvent('server_error', 'The server had an error')],
            }
          : ok(),
      { maxRetries: 1 },
    )
    expect((await early.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(early.server.requests).toHaveLength(2)

    const late = await harness(
      () => ({
        done: false,
        sse: [
          ...replyEvents({ items: [{ type: 'message', text: 'half' }] }).slice(0, -1),
          failedEvent('server_error', 'The model failed'),
        ],
      }),
      { maxRetries: 2 },
    )
    const error = await late.failure()
    expect(error).toMatchObject({ code: 'SERVER', provider: 'openai' })
    expect(error.message).toMatch(/reported response\.failed \(server_error\): The model failed/)
    expect(late.server.requests).toHaveLength(1)

    const overflow = await harness(
      () => ({
        done: false,
        sse: [errorEvent('context_length_exceeded', 'Your input exceeds the context window of this model.')],
      }),
      { maxRetries: 2 },
    )
    expect(await overflow.failure()).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', retryable: false })
    const limited = await harness(
      () => ({ done: false, sse: [failedEvent('rate_limit_exceeded', 'Rate limit reached')] }),
      { maxRetries: 0 },
    )
    expect(await limited.failure()).toMatchObject({ code: 'RATE_LIMITED' })
  })

  it('fails with NETWORK when nothing listens, and ABORTED when the caller aborts mid-stream', async () => {
    const dead = await harness(() => ok(), { baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0 })
    expect((await dead.failure()).code).toBe('NETWORK')
    const held = await harness(() => ({
      done: false,
      hold: true,
      sse: replyEvents({ items: [{ type: 'message', text: 'streaming' }] }).slice(0, 5),
    }))
    const controller = new AbortController()
    let caught: unknown
    try {
      for await (const chunk of held.ctx.llm.stream({
        provider: 'openai',
        model: 'gpt-test',
        messages: [],
        signal: controller.signal,
      })) {
        if (chunk.type === 'text-delta') controller.abort()
      }
    } catch (error) {
      caught = error
    }
    expect(caught).toMatchObject({ code: 'ABORTED' })
    await held.server.closed(0)
  })
})
