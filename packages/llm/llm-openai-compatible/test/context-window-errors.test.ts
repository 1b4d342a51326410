import type { LlmErrorCode } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { AdapterHarness } from './fixture.ts'
import { collect, expectLlmError, finish, MODEL, mountAdapter, request } from './fixture.ts'
import { chunk } from './provider-streams.ts'
import type { Reply } from '@warmfold/test-utils'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
})

/** An error event inside a 200 stream, as vLLM and older SGLang send it once streaming has begun. */
function inStream(error: object, before: object[] = []): Reply {
  return { sse: [...before, { error }] }
}

const anthropicPromptTooLong =
  '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215402 tokens > 200000 maximum"}}'

/**
 * Real overflow answers, each with the status and body shape its server uses (the texts and their
 * sources are listed next to CONTEXT_WINDOW_PATTERNS in src/map-error.ts), and answers that only
 * look similar. Every row is served by a real HTTP server on 127.0.0.1.
 */
const ROWS: Array<[string, Reply, LlmErrorCode]> = [
  // OpenAI
  [
    'OpenAI: maximum context length, code context_length_exceeded',
    {
      status: 400,
      body: {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130123 tokens. Please reduce the length of the messages.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'OpenAI: input exceeds the context window',
    {
      status: 400,
      body: {
        error: {
          message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
          type: 'invalid_request_error',
          param: 'input',
          code: 'context_length_exceeded',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'OpenAI: the code alone',
    {
      status: 400,
      body: {
        error: {
          message: 'Input too large.',
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'OpenAI / Azure GPT-5: input tokens exceed the configured limit',
    {
      status: 400,
      body: {
        error: {
          message:
            'Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 509178 tokens. Please reduce the length of the messages.',
          type: 'invalid_request_error',
          param: 'messages',
          code: null,
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // DeepSeek
  [
    'DeepSeek: maximum context length, code invalid_request_error',
    {
      status: 400,
      body: {
        error: {
          message:
            "This model's maximum context length is 131072 tokens. However, you requested 141980 tokens (133980 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.",
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request_error',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // vLLM
  [
    'vLLM V0: the top-level ErrorResponse',
    {
      status: 400,
      body: {
        object: 'error',
        message:
          "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4500 in the messages, 500 in the completion). Please reduce the length of the messages or completion.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'vLLM: your request has N input tokens',
    {
      status: 400,
      body: {
        error: {
          message:
            "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.",
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'vLLM: max_tokens too large for what the prompt leaves',
    {
      status: 400,
      body: {
        error: {
          message:
            "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 8192 tokens and your request has 5000 input tokens (4096 > 8192 - 5000).",
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'vLLM V1: the decoder prompt is longer than the maximum model length',
    {
      status: 400,
      body: {
        error: {
          message:
            'The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.',
          type: 'BadRequestError',
          param: null,
          code: 400,
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'vLLM V1: the same, as an error event inside the stream',
    inStream({
      message:
        'The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.',
      type: 'BadRequestError',
      param: null,
      code: 400,
    }),
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // SGLang
  [
    "SGLang: the input is longer than the model's context length",
    {
      status: 400,
      body: {
        object: 'error',
        message: "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    "SGLang: requested token count exceeds the model's maximum context length",
    {
      status: 400,
      body: {
        object: 'error',
        message:
          "Requested token count exceeds the model's maximum context length of 8192 tokens. You requested a total of 9000 tokens: 8000 tokens from the input messages and 1000 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'SGLang (older): the input error as an event after the first chunk',
    inStream(
      {
        object: 'error',
        message: "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
      [chunk(MODEL, { role: 'assistant', content: '' })],
    ),
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // llama.cpp
  [
    'llama.cpp: request exceeds the available context size (with counts)',
    {
      status: 400,
      body: {
        error: {
          code: 400,
          message: 'request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it',
          type: 'exceed_context_size_error',
          n_prompt_tokens: 9000,
          n_ctx: 8192,
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'llama.cpp (older): the request exceeds the available context size',
    {
      status: 400,
      body: {
        error: {
          code: 400,
          message: 'the request exceeds the available context size, try increasing it',
          type: 'exceed_context_size_error',
          n_prompt_tokens: 9000,
          n_ctx: 8192,
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // OpenRouter
  [
    "OpenRouter: this endpoint's maximum context length",
    {
      status: 400,
      body: {
        error: {
          message:
            'This endpoint\'s maximum context length is 163840 tokens. However, you requested about 200000 tokens (190000 of text input, 10000 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
          code: 400,
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'OpenRouter: an Anthropic overflow wrapped in metadata.raw',
    {
      status: 400,
      body: {
        error: {
          message: 'Provider returned error',
          code: 400,
          metadata: { raw: anthropicPromptTooLong, provider_name: 'Anthropic' },
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'OpenRouter: an OpenAI overflow code wrapped in metadata.raw',
    {
      status: 400,
      body: {
        error: {
          message: 'Provider returned error',
          code: 400,
          metadata: {
            raw: JSON.stringify({
              error: {
                message: 'Input too large.',
                type: 'invalid_request_error',
                param: 'input',
                code: 'context_length_exceeded',
              },
            }),
            provider_name: 'OpenAI',
          },
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // LiteLLM proxy
  [
    'LiteLLM proxy: ContextWindowExceededError from Anthropic',
    {
      status: 400,
      body: {
        error: {
          message: `litellm.BadRequestError: litellm.ContextWindowExceededError: AnthropicError - ${anthropicPromptTooLong}\nReceived Model Group=anthropic/claude-3-5-sonnet-20241022\nAvailable Model Group Fallbacks=None`,
          type: null,
          param: null,
          code: '400',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'LiteLLM proxy: ContextWindowExceededError from DeepSeek',
    {
      status: 400,
      body: {
        error: {
          message:
            'litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: DeepseekException - {"error":{"message":"This model\'s maximum context length is 65536 tokens. However, you requested 68161 tokens (68161 in the messages, 0 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}',
          type: null,
          param: null,
          code: '400',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'LiteLLM proxy: an Anthropic context-limit error passed on as BadRequestError',
    {
      status: 400,
      body: {
        error: {
          message:
            'litellm.BadRequestError: AnthropicException - b\'{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 179413 + 32768 > 200000, decrease input length or `max_tokens` and try again"}}\'. Received Model Group=anthropic/claude-sonnet-4-20250514\nAvailable Model Group Fallbacks=None',
          type: null,
          param: null,
          code: '400',
        },
      },
    },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // Generic wording
  [
    'generic: prompt is too long (413, plain text)',
    { status: 413, body: 'prompt is too long: 210000 tokens > 200000 maximum' },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  [
    'generic: too many tokens (FastAPI detail)',
    { status: 400, body: { detail: 'Too many tokens in the request.' } },
    'CONTEXT_WINDOW_EXCEEDED',
  ],
  // Look-alikes that are not an overflow
  [
    'OpenAI: a string too long for one parameter',
    {
      status: 400,
      body: {
        error: {
          message:
            "Invalid 'messages[1].content': string too long. Expected a string with maximum length 10485760, but got a string with length 10485761 instead.",
          type: 'invalid_request_error',
          param: 'messages[1].content',
          code: 'string_above_max_length',
        },
      },
    },
    'INVALID_REQUEST',
  ],
  [
    'OpenAI: a bad temperature',
    {
      status: 400,
      body: {
        error: {
          message: "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 200 instead.",
          type: 'invalid_request_error',
          param: 'temperature',
          code: 'decimal_above_max_value',
        },
      },
    },
    'INVALID_REQUEST',
  ],
  [
    'DeepSeek: an out-of-range max_tokens',
    {
      status: 400,
      body: {
        error: {
          message: 'Invalid max_tokens value, the valid range of max_tokens is [1, 8192]',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request_error',
        },
      },
    },
    'INVALID_REQUEST',
  ],
  [
    'vLLM: an unknown model',
    {
      status: 404,
      body: { error: { message: 'The model `gpt-9` does not exist.', type: 'NotFoundError', param: null, code: 404 } },
    },
    'INVALID_REQUEST',
  ],
  [
    'llama.cpp: tools without --jinja',
    {
      status: 400,
      body: { error: { code: 400, message: 'tools param requires --jinja flag', type: 'invalid_request_error' } },
    },
    'INVALID_REQUEST',
  ],
  [
    'OpenRouter: a wrapped upstream error that is not an overflow',
    {
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
    'OpenAI: a token rate limit (429 wins over the wording)',
    {
      status: 429,
      body: {
        error: {
          message:
            'Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 5000. Too many tokens, please wait.',
          type: 'tokens',
          param: null,
          code: 'rate_limit_exceeded',
        },
      },
    },
    'RATE_LIMITED',
  ],
  [
    'an error event that is not an overflow',
    inStream({ message: 'the engine overloaded', type: 'server_error' }, [chunk(MODEL, { content: 'partial' })]),
    'SERVER',
  ],
]

describe('context-window errors', () => {
  it.each(ROWS)('%s', async (_name, reply, code) => {
    const harness = await mountAdapter(() => reply, { provider: 'ctx', maxRetries: 0 })
    harnesses.push(harness)
    const error = await expectLlmError(() => collect(harness, request(harness)), code)
    expect(error.provider).toBe('ctx')
    if ('status' in reply) expect(error.message).toContain(`HTTP ${reply.status}`)
    if (code === 'CONTEXT_WINDOW_EXCEEDED') expect(error.retryable).toBe(false)
    expect(harness.server.requests).toHaveLength(1)
  })

  it('names the upstream provider and its message when OpenRouter wrapped them', async () => {
    const harness = await mountAdapter(() => ROWS.find(([name]) => name.startsWith('OpenRouter: an Anthropic'))![1], {
      provider: 'openrouter',
      maxRetries: 0,
    })
    harnesses.push(harness)
    const error = await expectLlmError(() => collect(harness, request(harness)), 'CONTEXT_WINDOW_EXCEEDED')
    expect(error.message).toContain(
      'Provider returned error (Anthropic: prompt is too long: 215402 tokens > 200000 maximum)',
    )
  })
})
