import type { LlmErrorCode } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { AdapterHarness } from './adapter-fixture.ts'
import { mountAdapter } from './adapter-fixture.ts'
import type { ServerReply } from './anthropic-test-server.ts'
import { errorEvent, messageStart } from './sse-script.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

const PROMPT_TOO_LONG = 'prompt is too long: 215402 tokens > 200000 maximum'
const CONTEXT_LIMIT =
  'input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again'

/** An error answer with Anthropic's body, plus the `request_id` field the API adds. */
function anthropicError(status: number, type: string, message: string): ServerReply {
  return {
    kind: 'status',
    status,
    body: { type: 'error', error: { type, message }, request_id: 'req_011CUB2XUHWkFnQzxcKBbjpF' },
  }
}

/**
 * Real overflow answers of the Messages API and of the gateways that speak it, each with the status
 * and body shape they use (the texts and their sources are listed next to CONTEXT_WINDOW_PATTERNS in
 * src/map-error.ts), and answers that only look similar. Every row is served by a real HTTP server
 * on 127.0.0.1.
 */
const ROWS: Array<[string, ServerReply, LlmErrorCode]> = [
  [
    'Anthropic: prompt is too long',
    anthropicError(400, 'invalid_request_error', PROMPT_TOO_LONG),
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'Anthropic: input length and max_tokens exceed context limit',
    anthropicError(400, 'invalid_request_error', CONTEXT_LIMIT),
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'Anthropic: the context limit as an error event before any content',
    {
      kind: 'stream',
      events: [messageStart({ input_tokens: 1, output_tokens: 1 }), errorEvent('invalid_request_error', CONTEXT_LIMIT)],
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'LiteLLM proxy: ContextWindowExceededError',
    {
      kind: 'status',
      status: 400,
      body: {
        error: {
          message: `litellm.BadRequestError: litellm.ContextWindowExceededError: AnthropicError - {"type":"error","error":{"type":"invalid_request_error","message":"${PROMPT_TOO_LONG}"}}\nReceived Model Group=anthropic/claude-3-5-sonnet-20241022\nAvailable Model Group Fallbacks=None`,
          type: null,
          param: null,
          code: '400',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'LiteLLM proxy: the context limit passed on as BadRequestError',
    {
      kind: 'status',
      status: 400,
      body: {
        error: {
          message: `litellm.BadRequestError: AnthropicException - b'{"type":"error","error":{"type":"invalid_request_error","message":"${CONTEXT_LIMIT}"}}'`,
          type: null,
          param: null,
          code: '400',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'OpenRouter: the overflow wrapped in metadata.raw',
    {
      kind: 'status',
      status: 400,
      body: {
        error: {
          message: 'Provider returned error',
          code: 400,
          metadata: {
            raw: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: CONTEXT_LIMIT } }),
            provider_name: 'Anthropic',
          },
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    "an Anthropic-compatible endpoint in front of vLLM: the model's maximum context length",
    anthropicError(
      400,
      'invalid_request_error',
      "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.",
    ),
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // Look-alikes that are not an overflow
  [
    'Anthropic: max_tokens above the model output limit',
    anthropicError(
      400,
      'invalid_request_error',
      'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514',
    ),
    'INVALID_REQUEST',
  ],
  [
    'Anthropic: a malformed message',
    anthropicError(400, 'invalid_request_error', 'messages.1.content: field required'),
    'INVALID_REQUEST',
  ],
  [
    'Anthropic: a request over the byte limit',
    anthropicError(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
    'INVALID_REQUEST',
  ],
  [
    'OpenRouter: a wrapped upstream error that is not an overflow',
    {
      kind: 'status',
      status: 400,
      body: {
        error: {
          message: 'Provider returned error',
          code: 400,
          metadata: {
            raw: '{"type":"error","error":{"type":"invalid_request_error","message":"tools: Tool names must be unique."}}',
            provider_name: 'Anthropic',
          },
        },
      },
    },
    'INVALID_REQUEST',
  ],
  [
    'Anthropic: an input-token rate limit (429 wins over the wording)',
    anthropicError(
      429,
      'rate_limit_error',
      'This request would exceed the rate limit for your organization of 40,000 input tokens per minute.',
    ),
    'RATE_LIMITED',
  ],
]

describe('context-window errors', () => {
  it.each(ROWS)('%s', async (_name, reply, code) => {
    const adapter = await mountAdapter(() => reply, { maxRetries: 0 })
    harnesses.push(adapter)
    const error = await adapter.failure()
    expect(error, error.message).toMatchObject({ code, provider: 'anthropic' })
    if (reply.kind === 'status') expect(error.status).toBe(reply.status)
    if (code === 'CONTEXT_WINDOW_EXCEEDED') expect(error.retryable).toBe(false)
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('names the upstream provider and its message when OpenRouter wrapped them', async () => {
    const adapter = await mountAdapter(() => ROWS.find(([name]) => name.startsWith('OpenRouter: the overflow'))![1], {
      maxRetries: 0,
    })
    harnesses.push(adapter)
    expect((await adapter.failure()).message).toContain(`Provider returned error (Anthropic: ${CONTEXT_LIMIT})`)
  })
})
