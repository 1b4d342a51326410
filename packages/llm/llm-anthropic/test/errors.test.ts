import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { LlmErrorCode } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { AdapterHarness } from './adapter-fixture.ts'
import { mountAdapter } from './adapter-fixture.ts'
import type { Responder } from './anthropic-test-server.ts'
import { blockEvents, errorEvent, errorReply, messageStart, streamReply } from './sse-script.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harness(responder: Responder, config: Record<string, unknown> = {}): Promise<AdapterHarness> {
  const created = await mountAdapter(responder, config)
  harnesses.push(created)
  return created
}

const ok = () => streamReply({ blocks: [{ type: 'text', text: 'ok' }] })

describe('max_tokens and the thinking budget', () => {
  it("refuses a request whose max_tokens is not above the effort's budget_tokens, naming both numbers, and sends nothing", async () => {
    const adapter = await harness(() => ok())
    for (const maxTokens of [8192, 4000]) {
      const error = await adapter.failure({ reasoningEffort: 'high', maxTokens })
      expect(error).toMatchObject({ code: 'INVALID_REQUEST', provider: 'anthropic', retryable: false })
      expect(error.message).toBe(
        `anthropic/claude-test: maxTokens ${maxTokens} is not above the 8192 output tokens reasoningEffort "high" reserves for reasoning (thinkingBudgets.high, sent as thinking.budget_tokens); ` +
          'the provider would reject the request or spend the whole cap on reasoning. Raise maxTokens above 8192, or choose a lower effort',
      )
    }
    // The model's defaultMaxTokens (1024) counts the same way when the request sets none.
    expect((await adapter.failure({ reasoningEffort: 'low' })).message).toContain(
      'maxTokens 1024 is not above the 2048 output tokens reasoningEffort "low"',
    )
    expect(adapter.server.requests).toHaveLength(0)
    await adapter.collect({ reasoningEffort: 'high', maxTokens: 8193 })
    expect(adapter.server.requests[0]!.body).toMatchObject({
      max_tokens: 8193,
      thinking: { type: 'enabled', budget_tokens: 8192 },
    })
    // Without thinking there is no reserve.
    await adapter.collect({ reasoningEffort: 'off', maxTokens: 100 })
    expect(adapter.server.requests[1]!.body).toMatchObject({ max_tokens: 100 })
  })
})

describe('error mapping', () => {
  it.each<[number, string, string, LlmErrorCode, boolean]>([
    [400, 'invalid_request_error', 'messages.1.content: field required', 'INVALID_REQUEST', false],
    [
      400,
      'invalid_request_error',
      'prompt is too long: 215402 tokens > 200000 maximum',
      'CONTEXT_WINDOW_EXCEEDED',
      false,
    ],
    [401, 'authentication_error', 'invalid x-api-key', 'AUTH', false],
    [403, 'permission_error', 'Your API key does not have permission to use the specified resource.', 'AUTH', false],
    [404, 'not_found_error', 'model: claude-nope', 'INVALID_REQUEST', false],
    [408, 'timeout_error', 'Request timed out', 'TIMEOUT', true],
    [413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', 'INVALID_REQUEST', false],
    [429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', 'RATE_LIMITED', true],
    [500, 'api_error', 'Internal server error', 'SERVER', true],
    [503, 'api_error', 'Service unavailable', 'SERVER', true],
    [529, 'overloaded_error', 'Overloaded', 'SERVER', true],
  ])('HTTP %i %s → %s', async (status, type, message, code, retryable) => {
    const adapter = await harness(() => errorReply(status, type, message), { maxRetries: 0 })
    const error = await adapter.failure()
    expect(error).toMatchObject({ code, status, provider: 'anthropic', retryable })
    expect(error.message).toContain('anthropic/claude-test')
    expect(error.message).toContain(`HTTP ${status}`)
    expect(error.message).toContain(type)
    expect(error.message).toContain(message)
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('retries a 408 (the server gave up waiting for the request), as the Anthropic SDK does, and recovers', async () => {
    const adapter = await harness(
      (_request, index) => (index === 0 ? errorReply(408, 'timeout_error', 'Request timed out') : ok()),
      { maxRetries: 1, retryBaseMs: 1 },
    )
    expect((await adapter.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests).toHaveLength(2)
  })

  it('retries 529 overloaded up to maxRetries, then throws SERVER', async () => {
    const adapter = await harness(() => errorReply(529, 'overloaded_error', 'Overloaded'), { maxRetries: 2 })
    const error = await adapter.failure()
    expect(error).toMatchObject({ code: 'SERVER', status: 529, retryable: true })
    expect(error.message).toMatch(/gave up after 3 attempts/)
    expect(adapter.server.requests).toHaveLength(3)
  })

  it('recovers when a retry succeeds, and never retries a non-retryable status', async () => {
    const flaky = await harness(
      (_request, index) => (index < 2 ? errorReply(index === 0 ? 529 : 500, 'api_error', 'try again') : ok()),
      { maxRetries: 2 },
    )
    expect((await flaky.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(flaky.server.requests).toHaveLength(3)
    const invalid = await harness(() => errorReply(400, 'invalid_request_error', 'bad'), { maxRetries: 2 })
    expect((await invalid.failure()).code).toBe('INVALID_REQUEST')
    expect(invalid.server.requests).toHaveLength(1)
  })

  it('lets x-should-retry override the retryable default', async () => {
    const adapter = await harness(() => errorReply(503, 'api_error', 'do not retry', { 'x-should-retry': 'false' }), {
      maxRetries: 2,
    })
    expect(await adapter.failure()).toMatchObject({ code: 'SERVER', retryable: false })
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('honours retry-after: waits what the server asks instead of the backoff', async () => {
    // The backoff would be 10 minutes; the test only finishes because retry-after (0 s) wins.
    const adapter = await harness(
      (_request, index) =>
        index === 0 ? errorReply(429, 'rate_limit_error', 'slow down', { 'retry-after': '0' }) : ok(),
      {
        maxRetries: 1,
        retryBaseMs: 600_000,
      },
    )
    expect((await adapter.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests).toHaveLength(2)
  })

  it('reports retry-after on the error, and hands a wait over 60 s to the caller', async () => {
    const once = await harness(() => errorReply(429, 'rate_limit_error', 'slow down', { 'retry-after': '7' }), {
      maxRetries: 0,
    })
    expect(await once.failure()).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 7 })
    const long = await harness(() => errorReply(429, 'rate_limit_error', 'slow down', { 'retry-after': '120' }), {
      maxRetries: 2,
    })
    expect(await long.failure()).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 120 })
    expect(long.server.requests).toHaveLength(1)
  })

  it('hands a 429 whose retry-after outlasts deadlineMs to the caller as RATE_LIMITED with the retry-after, not as a TIMEOUT', async () => {
    const adapter = await harness(() => errorReply(429, 'rate_limit_error', 'slow down', { 'retry-after': '30' }), {
      maxRetries: 2,
      deadlineMs: 3_000,
    })
    const error = await adapter.failure()
    expect(error).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterSeconds: 30, retryable: true })
    expect(error.message).toMatch(
      /\(not retried: waiting 30000 ms for the next attempt would outlast the call's deadline \(\d+ ms left\)\)$/,
    )
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('maps a stream error event, retrying it only while no content was yielded', async () => {
    const early = await harness(
      (_request, index) =>
        index === 0
          ? {
              kind: 'stream',
              events: [
                messageStart({ input_tokens: 1, output_tokens: 1 }),
                errorEvent('overloaded_error', 'Overloaded'),
              ],
            }
          : ok(),
      { maxRetries: 1 },
    )
    expect((await early.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(early.server.requests).toHaveLength(2)

    const late = await harness(
      () => ({
        kind: 'stream',
        events: [
          messageStart({ input_tokens: 1, output_tokens: 1 }),
          ...blockEvents({ type: 'text', text: 'half' }, 0),
          errorEvent('overloaded_error', 'Overloaded'),
        ],
      }),
      {
        maxRetries: 2,
      },
    )
    const error = await late.failure()
    expect(error).toMatchObject({ code: 'SERVER', provider: 'anthropic' })
    expect(error.status).toBeUndefined()
    expect(error.message).toMatch(/sent an error event mid-stream \(overloaded_error.*\): Overloaded/)
    expect(late.server.requests).toHaveLength(1)
  })

  it('throws STREAM_INCOMPLETE when the stream ends without message_stop', async () => {
    const adapter = await harness(
      () => ({
        kind: 'stream',
        events: [messageStart({ input_tokens: 1, output_tokens: 1 }), ...blockEvents({ type: 'text', text: 'cut' }, 0)],
      }),
      { maxRetries: 2 },
    )
    const error = await adapter.failure()
    expect(error.code).toBe('STREAM_INCOMPLETE')
    expect(error.message).toMatch(/anthropic\/claude-test ended after \d+ events without message_stop/)
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('stops the stream on abort (ABORTED) and closes the connection', async () => {
    const adapter = await harness(() => ({
      kind: 'stream',
      events: [
        messageStart({ input_tokens: 1, output_tokens: 1 }),
        ...blockEvents({ type: 'text', text: 'streaming' }, 0).slice(0, 2),
      ],
      ending: 'hang',
    }))
    const controller = new AbortController()
    const seen: string[] = []
    let caught: unknown
    try {
      for await (const chunk of adapter.ctx.llm.stream({
        provider: 'anthropic',
        model: 'claude-test',
        messages: [],
        signal: controller.signal,
      })) {
        seen.push(chunk.type)
        if (chunk.type === 'text-delta') controller.abort(new Error('user pressed stop'))
      }
    } catch (error) {
      caught = error
    }
    expect(seen).toEqual(['block-start', 'text-delta'])
    expect(LlmError.isInstance(caught) && caught.code).toBe('ABORTED')
    await adapter.server.closed(0)
  })

  it('aborts the wait between retries', async () => {
    const controller = new AbortController()
    const adapter = await harness(
      () => {
        setImmediate(() => controller.abort())
        return errorReply(529, 'overloaded_error', 'Overloaded')
      },
      { maxRetries: 3, retryBaseMs: 600_000 },
    )
    expect((await adapter.failure({ signal: controller.signal })).code).toBe('ABORTED')
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('maps a refused connection to NETWORK and a response that never starts to TIMEOUT', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const refused = await harness(ok, { baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 })
    const network = await refused.failure()
    expect(network).toMatchObject({ code: 'NETWORK', provider: 'anthropic', retryable: true })
    expect(network.message).toMatch(/could not reach anthropic\/claude-test/)

    const silent = await harness(() => ({ kind: 'hang' }), { timeoutMs: 100, maxRetries: 0 })
    expect(await silent.failure()).toMatchObject({ code: 'TIMEOUT', provider: 'anthropic', retryable: true })
  })

  it('fails a stream that stalls after it started with TIMEOUT instead of hanging, and closes the connection', async () => {
    const adapter = await harness(
      () => ({
        kind: 'stream',
        events: [
          messageStart({ input_tokens: 1, output_tokens: 1 }),
          ...blockEvents({ type: 'text', text: 'stall' }, 0).slice(0, 2),
        ],
        ending: 'hang',
      }),
      {
        timeoutMs: 200,
        maxRetries: 2,
      },
    )
    const seen: string[] = []
    let caught: unknown
    try {
      for await (const chunk of adapter.ctx.llm.stream({ provider: 'anthropic', model: 'claude-test', messages: [] }))
        seen.push(chunk.type)
    } catch (error) {
      caught = error
    }
    expect(seen).toEqual(['block-start', 'text-delta'])
    expect(caught).toMatchObject({ code: 'TIMEOUT', provider: 'anthropic' })
    expect((caught as Error).message).toMatch(
      /anthropic\/claude-test: no response or stream progress for timeoutMs \(200 ms\) \(pings and empty deltas do not count\)/,
    )
    // Output had already reached the caller, so the request is not sent again.
    expect(adapter.server.requests).toHaveLength(1)
    await adapter.server.closed(0)
  })

  it('maps a connection cut mid-stream to NETWORK without retrying the partial reply', async () => {
    const adapter = await harness(
      () => ({
        kind: 'stream',
        events: [
          messageStart({ input_tokens: 1, output_tokens: 1 }),
          ...blockEvents({ type: 'text', text: 'cut' }, 0).slice(0, 2),
        ],
        ending: 'hang',
      }),
      {
        maxRetries: 2,
      },
    )
    let caught: unknown
    try {
      for await (const chunk of adapter.ctx.llm.stream({ provider: 'anthropic', model: 'claude-test', messages: [] })) {
        if (chunk.type === 'text-delta') adapter.server.cut(0)
      }
    } catch (error) {
      caught = error
    }
    expect(LlmError.isInstance(caught) && caught.code).toBe('NETWORK')
    expect((caught as LlmError).message).toMatch(/the connection to anthropic\/claude-test failed: /)
    expect(adapter.server.requests).toHaveLength(1)
  })
})
