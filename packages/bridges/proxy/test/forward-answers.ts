import type { ProviderUsage } from '../src/index.ts'
import type { ScriptedAnswer, UpstreamRecord } from './forward-scripted-upstream.ts'
import { jsonHeaders, sse, SSE_HEADERS } from './forward-scripted-upstream.ts'

/** A scripted answer and the usage the proxy must read from it. */
export interface AnswerFixture {
  readonly parts: readonly string[]
  readonly streamed: boolean
  readonly usage?: ProviderUsage
  readonly responseId?: string
  readonly providerDiagnosis?: string
}

const ANTHROPIC_USAGE = { input_tokens: 10, cache_read_input_tokens: 1000, cache_creation_input_tokens: 50 }
const ANTHROPIC_EXPECTED = { inputTokens: 1060, cacheReadTokens: 1000, cacheWriteTokens: 50, outputTokens: 5 }
const DIAGNOSTICS = { cache_miss_reason: 'messages_changed', previous_message_id: 'msg_0' }

export const anthropicStream: AnswerFixture = {
  streamed: true,
  responseId: 'msg_1',
  usage: ANTHROPIC_EXPECTED,
  providerDiagnosis: JSON.stringify(DIAGNOSTICS),
  parts: [
    sse(
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-test',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...ANTHROPIC_USAGE, output_tokens: 1 },
          diagnostics: DIAGNOSTICS,
        },
      },
      'message_start',
    ),
    sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }, 'content_block_delta'),
    sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
    sse(
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } },
      'message_delta',
    ),
    sse({ type: 'message_stop' }, 'message_stop'),
  ],
}

export const anthropicJson: AnswerFixture = {
  streamed: false,
  responseId: 'msg_2',
  usage: ANTHROPIC_EXPECTED,
  parts: [
    JSON.stringify({
      id: 'msg_2',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [{ type: 'text', text: 'Hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { ...ANTHROPIC_USAGE, output_tokens: 5 },
    }),
  ],
}

const CHAT_USAGE = {
  prompt_tokens: 1200,
  completion_tokens: 5,
  total_tokens: 1205,
  prompt_tokens_details: { cached_tokens: 1024 },
}
const CHAT_EXPECTED = { inputTokens: 1200, cacheReadTokens: 1024, cacheWriteTokens: 0, outputTokens: 5 }
const chunk = (delta: object, finish: string | null, usage?: object) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-test',
  choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
  ...(usage ? { usage } : {}),
})

export const chatStream: AnswerFixture = {
  streamed: true,
  responseId: 'chatcmpl-1',
  usage: CHAT_EXPECTED,
  parts: [
    sse(chunk({ role: 'assistant', content: '' }, null)),
    sse(chunk({ content: 'Hello' }, null)),
    sse(chunk({}, 'stop')),
    sse(chunk({}, null, CHAT_USAGE)),
    sse('[DONE]'),
  ],
}

export const chatJson: AnswerFixture = {
  streamed: false,
  responseId: 'chatcmpl-2',
  usage: CHAT_EXPECTED,
  parts: [
    JSON.stringify({
      id: 'chatcmpl-2',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
      usage: CHAT_USAGE,
    }),
  ],
}

const RESPONSES_USAGE = {
  input_tokens: 2000,
  input_tokens_details: { cached_tokens: 1920 },
  output_tokens: 7,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 2007,
}
const RESPONSES_EXPECTED = { inputTokens: 2000, cacheReadTokens: 1920, cacheWriteTokens: 0, outputTokens: 7 }
const PROMPT_CACHE_DIAGNOSTICS = { cache_missed_tokens: 80, reason: 'input_changed' }
const message = { id: 'msg_r', type: 'message', role: 'assistant', status: 'completed' }
const textPart = { type: 'output_text', text: 'Hello', annotations: [] }
const responseBody = (id: string, status: string, withOutput: boolean) => ({
  id,
  object: 'response',
  created_at: 1,
  status,
  model: 'gpt-test',
  output: withOutput ? [{ ...message, content: [textPart] }] : [],
  ...(withOutput ? { usage: RESPONSES_USAGE, prompt_cache_diagnostics: PROMPT_CACHE_DIAGNOSTICS } : {}),
})

export const responsesStream: AnswerFixture = {
  streamed: true,
  responseId: 'resp_1',
  usage: RESPONSES_EXPECTED,
  providerDiagnosis: JSON.stringify(PROMPT_CACHE_DIAGNOSTICS),
  parts: [
    sse(
      { type: 'response.created', sequence_number: 0, response: responseBody('resp_1', 'in_progress', false) },
      'response.created',
    ),
    sse(
      {
        type: 'response.output_item.added',
        sequence_number: 1,
        output_index: 0,
        item: { ...message, status: 'in_progress', content: [] },
      },
      'response.output_item.added',
    ),
    sse(
      {
        type: 'response.output_text.delta',
        sequence_number: 2,
        item_id: 'msg_r',
        output_index: 0,
        content_index: 0,
        delta: 'Hello',
      },
      'response.output_text.delta',
    ),
    sse(
      { type: 'response.completed', sequence_number: 3, response: responseBody('resp_1', 'completed', true) },
      'response.completed',
    ),
  ],
}

export const responsesJson: AnswerFixture = {
  streamed: false,
  responseId: 'resp_2',
  usage: RESPONSES_EXPECTED,
  providerDiagnosis: JSON.stringify(PROMPT_CACHE_DIAGNOSTICS),
  parts: [JSON.stringify(responseBody('resp_2', 'completed', true))],
}

const GEMINI_USAGE = {
  promptTokenCount: 3000,
  cachedContentTokenCount: 2048,
  candidatesTokenCount: 4,
  totalTokenCount: 3004,
}
const GEMINI_EXPECTED = { inputTokens: 3000, cacheReadTokens: 2048, cacheWriteTokens: 0, outputTokens: 4 }
const geminiChunk = (text: string, usage?: object) => ({
  candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...(usage ? { finishReason: 'STOP' } : {}) }],
  ...(usage ? { usageMetadata: usage } : {}),
  modelVersion: 'gemini-test',
  responseId: 'gem_1',
})

export const geminiStream: AnswerFixture = {
  streamed: true,
  responseId: 'gem_1',
  usage: GEMINI_EXPECTED,
  // Gemini separates events with CRLF pairs.
  parts: [
    `data: ${JSON.stringify(geminiChunk('Hel'))}\r\n\r\n`,
    `data: ${JSON.stringify(geminiChunk('lo', GEMINI_USAGE))}\r\n\r\n`,
  ],
}

export const geminiJson: AnswerFixture = {
  streamed: false,
  responseId: 'gem_1',
  usage: GEMINI_EXPECTED,
  parts: [JSON.stringify(geminiChunk('Hello', GEMINI_USAGE))],
}

export const anthropicCount: AnswerFixture = { streamed: false, parts: ['{"input_tokens":42}'] }
export const geminiCount: AnswerFixture = { streamed: false, parts: ['{"totalTokens":42}'] }
export const modelsList: AnswerFixture = {
  streamed: false,
  parts: ['{"object":"list","data":[{"id":"gpt-test","object":"model","created":0,"owned_by":"test"}]}'],
}

/** The answer a request gets from the scripted upstream, by its path and `stream` flag. */
export function fixtureFor(request: UpstreamRecord): AnswerFixture {
  const url = request.url
  const stream = /"stream"\s*:\s*true/.test(request.body.toString('utf8'))
  if (url.includes('/messages/count_tokens')) return anthropicCount
  if (url.includes(':countTokens')) return geminiCount
  if (url.includes(':streamGenerateContent')) return geminiStream
  if (url.includes(':generateContent')) return geminiJson
  if (url.includes('/messages')) return stream ? anthropicStream : anthropicJson
  if (url.includes('/chat/completions')) return stream ? chatStream : chatJson
  if (url.includes('/responses')) return stream ? responsesStream : responsesJson
  if (url.includes('/models')) return modelsList
  throw new Error(`no scripted answer for ${request.method} ${url}`)
}

/** The scripted answer for a fixture. */
export function answerOf(fixture: AnswerFixture): ScriptedAnswer {
  const body = fixture.parts.join('')
  return { status: 200, headers: fixture.streamed ? SSE_HEADERS : jsonHeaders(body), parts: fixture.parts }
}
