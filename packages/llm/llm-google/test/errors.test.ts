import { LlmError } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { errorBodyOf, retryDelaySeconds } from '../src/map-error.ts'
import { disposeAll, MODEL, MODEL_3, mountAdapter, request } from './fixture.ts'
import { geminiChunks, geminiError, geminiReply } from './gemini-stream.ts'

afterEach(disposeAll)

const RETRY_INFO = { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.01s' }

describe('maxOutputTokens and the thinking budget', () => {
  it("advertises each effort's thinking budget as its output reserve (none for levels, dynamic or off)", async () => {
    const adapter = await mountAdapter(() => geminiReply({ parts: [{ text: 'ok' }] }))
    expect(await adapter.ctx.llm.resolveModelInfo('google', MODEL)).toMatchObject({
      reasoning: {
        efforts: ['off', 'low', 'medium', 'high', 'dynamic'],
        outputReserveTokens: { low: 1024, medium: 8192, high: 24576 },
      },
    })
    expect((await adapter.ctx.llm.resolveModelInfo('google', MODEL_3)).reasoning).toEqual({ efforts: ['low', 'high'] })
  })

  it('sends a maxOutputTokens at or below the thinking budget as it is: Gemini accepts it, and the budget is only an upper bound', async () => {
    const adapter = await mountAdapter(() => geminiReply({ parts: [{ text: 'ok' }] }))
    // The model's defaultMaxTokens (8192) under effort high's budget (24576): not refused, unlike Anthropic.
    expect((await adapter.collect({ reasoningEffort: 'high' })).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests[0]!.json.generationConfig).toEqual({
      maxOutputTokens: 8192,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 24576 },
    })
  })
})

describe('error mapping', () => {
  it('maps 401/403 and a 400 API_KEY_INVALID to AUTH without retrying', async () => {
    for (const reply of [
      geminiError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.'),
      geminiError(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers."),
      geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', {
        details: [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
        ],
      }),
    ]) {
      const adapter = await mountAdapter(() => reply)
      const error = await adapter.failure('AUTH')
      expect(error).toMatchObject({ retryable: false, provider: 'google' })
      expect(error.message).toMatch(
        new RegExp(
          `^google/${MODEL} answered HTTP 4\\d\\d \\((UNAUTHENTICATED|PERMISSION_DENIED|INVALID_ARGUMENT)\\): `,
        ),
      )
      expect(adapter.server.requests).toHaveLength(1)
    }
  })

  it('retries a 429 RESOURCE_EXHAUSTED after RetryInfo.retryDelay, then succeeds', async () => {
    const adapter = await mountAdapter((_request, index) =>
      index === 0
        ? geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', { details: [RETRY_INFO] })
        : geminiReply({ parts: [{ text: 'ok' }] }),
    )
    const chunks = await adapter.collect()
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests).toHaveLength(2)
    expect(adapter.server.requests[1]!.body).toBe(adapter.server.requests[0]!.body)
  })

  it('reports the wait of a retry-after header, else of RetryInfo, on the final RATE_LIMITED error', async () => {
    const header = await mountAdapter(
      () =>
        geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', {
          details: [{ ...RETRY_INFO, retryDelay: '30s' }],
          headers: { 'retry-after': '120' },
        }),
      { maxRetries: 0 },
    )
    expect(await header.failure('RATE_LIMITED')).toMatchObject({ status: 429, retryAfterSeconds: 120, retryable: true })
    const details = await mountAdapter(
      () =>
        geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', {
          details: [{ ...RETRY_INFO, retryDelay: '33.5s' }],
        }),
      { maxRetries: 0 },
    )
    expect(await details.failure('RATE_LIMITED')).toMatchObject({ retryAfterSeconds: 33.5 })
    // Longer than MAX_RETRY_AFTER_SECONDS: handed to the caller at once.
    const long = await mountAdapter(
      () => geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', { headers: { 'retry-after': '3600' } }),
      { maxRetries: 3 },
    )
    expect(await long.failure('RATE_LIMITED')).toMatchObject({ retryAfterSeconds: 3600 })
    expect(long.server.requests).toHaveLength(1)
  })

  it('hands a 429 whose retry-after outlasts deadlineMs to the caller as RATE_LIMITED with the retry-after, not as a TIMEOUT', async () => {
    const adapter = await mountAdapter(
      () =>
        geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', { details: [{ ...RETRY_INFO, retryDelay: '30s' }] }),
      { maxRetries: 2, deadlineMs: 3_000 },
    )
    const error = await adapter.failure('RATE_LIMITED')
    expect(error).toMatchObject({ status: 429, retryAfterSeconds: 30, retryable: true })
    expect(error.message).toMatch(
      /\(not retried: waiting 30000 ms for the next attempt would outlast the call's deadline \(\d+ ms left\)\)$/,
    )
    expect(adapter.server.requests).toHaveLength(1)
  })

  it("maps 408 (the server gave up waiting for the request) to a retryable TIMEOUT and retries it, as the Google SDK's retry options do", async () => {
    const once = await mountAdapter(() => geminiError(408, 'DEADLINE_EXCEEDED', 'Request timed out.'), {
      maxRetries: 0,
    })
    expect(await once.failure('TIMEOUT')).toMatchObject({ status: 408, retryable: true })
    const adapter = await mountAdapter(
      (_request, index) =>
        index === 0
          ? geminiError(408, 'DEADLINE_EXCEEDED', 'Request timed out.')
          : geminiReply({ parts: [{ text: 'ok' }] }),
      { maxRetries: 1 },
    )
    expect((await adapter.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests).toHaveLength(2)
  })

  it('maps the token-limit 400 to CONTEXT_WINDOW_EXCEEDED and other 400s to INVALID_REQUEST', async () => {
    const overflow = await mountAdapter(() =>
      geminiError(
        400,
        'INVALID_ARGUMENT',
        'The input token count (3475108) exceeds the maximum number of tokens allowed (1048576).',
      ),
    )
    const error = await overflow.failure('CONTEXT_WINDOW_EXCEEDED')
    expect(error).toMatchObject({ status: 400, retryable: false })
    const invalid = await mountAdapter(() =>
      geminiError(400, 'INVALID_ARGUMENT', 'Function call is missing a thought_signature in functionCall parts.'),
    )
    expect((await invalid.failure('INVALID_REQUEST')).message).toContain('missing a thought_signature')
  })

  it('retries 5xx (INTERNAL, UNAVAILABLE) up to maxRetries and says how many attempts were made', async () => {
    const adapter = await mountAdapter(
      (_request, index) =>
        index === 0
          ? geminiError(500, 'INTERNAL', 'An internal error has occurred.')
          : geminiError(503, 'UNAVAILABLE', 'The model is overloaded.'),
      { maxRetries: 2 },
    )
    const error = await adapter.failure('SERVER')
    expect(error.message).toMatch(
      /answered HTTP 503 \(UNAVAILABLE\): The model is overloaded\. \(gave up after 3 attempts\)/,
    )
    expect(adapter.server.requests).toHaveLength(3)
    const plain = await mountAdapter(() => ({ status: 502, body: 'Bad Gateway' }), { maxRetries: 0 })
    expect((await plain.failure('SERVER')).message).toContain('Bad Gateway')
  })

  it('maps an error object in the stream before any content, and retries it', async () => {
    const adapter = await mountAdapter((_request, index) =>
      index === 0
        ? { sse: [{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }], done: false }
        : geminiReply({ parts: [{ text: 'ok' }] }),
    )
    expect((await adapter.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests).toHaveLength(2)
    const late = await mountAdapter(
      () => ({
        sse: [
          ...geminiChunks({ parts: [{ text: 'partial' }], finishReason: null }).slice(0, 1),
          { error: { code: 500, message: 'boom', status: 'INTERNAL' } },
        ],
        done: false,
      }),
      { maxRetries: 2 },
    )
    const error = await late.failure('SERVER')
    expect(error.message).toMatch(/sent an error mid-stream \(500\) \(INTERNAL\): boom/)
    expect(late.server.requests).toHaveLength(1)
  })

  it('throws STREAM_INCOMPLETE for a stream that ends without a finishReason, and retries it only before output', async () => {
    const empty = await mountAdapter((_request, index) =>
      index === 0 ? { sse: [], done: false } : geminiReply({ parts: [{ text: 'ok' }] }),
    )
    expect((await empty.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(empty.server.requests).toHaveLength(2)
    const cut = await mountAdapter(() => geminiReply({ parts: [{ text: 'half an answer' }], finishReason: null }), {
      maxRetries: 2,
    })
    const error = await cut.failure('STREAM_INCOMPLETE')
    expect(error.message).toMatch(/ended after 2 chunks without a finishReason/)
    expect(cut.server.requests).toHaveLength(1)
  })

  it('maps a connection cut mid-stream to NETWORK (a transport failure, as in every adapter) without retrying the partial reply', async () => {
    const adapter = await mountAdapter(
      () => ({
        sse: geminiChunks({ parts: [{ text: 'streaming' }], finishReason: null }).slice(0, 1),
        done: false,
        hold: true,
      }),
      { maxRetries: 2 },
    )
    let caught: unknown
    try {
      for await (const chunk of adapter.ctx.llm.stream(request())) {
        if (chunk.type === 'text-delta') adapter.server.cut(0)
      }
    } catch (error) {
      caught = error
    }
    expect(LlmError.isInstance(caught) && caught.code, String(caught)).toBe('NETWORK')
    expect(caught).toMatchObject({ retryable: true, provider: 'google' })
    expect((caught as LlmError).message).toBe(
      'the connection to google/gemini-2.5-flash failed: terminated: other side closed (UND_ERR_SOCKET)',
    )
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('retries a connection cut after the headers but before any output', async () => {
    const adapter = await mountAdapter(
      (_request, index) => {
        if (index > 0) return geminiReply({ parts: [{ text: 'ok' }] })
        // The headers and an empty keep-alive chunk are on the wire, then the socket is cut.
        setImmediate(() => adapter.server.cut(index))
        return { sse: [{ candidates: [{ content: { parts: [], role: 'model' }, index: 0 }] }], done: false, hold: true }
      },
      { maxRetries: 1 },
    )
    expect((await adapter.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests).toHaveLength(2)
  })

  it('maps a refused connection to NETWORK', async () => {
    const adapter = await mountAdapter(() => geminiReply({ parts: [{ text: 'x' }] }), { maxRetries: 0 })
    await adapter.server.close()
    const error = await adapter.failure('NETWORK')
    expect(error.message).toMatch(/the connection to google\/gemini-2.5-flash failed: fetch failed/)
  })

  it('stops on abort (ABORTED) and closes the connection', async () => {
    const adapter = await mountAdapter(() => ({
      sse: geminiChunks({ parts: [{ text: 'streaming' }], finishReason: null }).slice(0, 1),
      done: false,
      hold: true,
    }))
    const controller = new AbortController()
    let caught: unknown
    try {
      for await (const chunk of adapter.ctx.llm.stream(request({ signal: controller.signal }))) {
        if (chunk.type === 'text-delta') controller.abort(new Error('user pressed stop'))
      }
    } catch (error) {
      caught = error
    }
    expect(LlmError.isInstance(caught) && caught.code).toBe('ABORTED')
    await adapter.server.closed(0)
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('parses error bodies and RetryInfo durations', () => {
    expect(errorBodyOf('got status: UNAVAILABLE. {"error":{"code":503,"status":"UNAVAILABLE"}}')).toEqual({
      code: 503,
      status: 'UNAVAILABLE',
    })
    expect(errorBodyOf('[{"error":{"code":400}}]')).toEqual({ code: 400 })
    expect(errorBodyOf('not json')).toBeUndefined()
    expect(
      retryDelaySeconds({ details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] }),
    ).toBe(7)
    expect(
      retryDelaySeconds({ details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: 'soon' }] }),
    ).toBeUndefined()
  })
})
