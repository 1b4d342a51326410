import type { RequestApi, WireRequest } from './canonical-request.ts'
import { isRecord } from './canonical-request.ts'

/**
 * How a request's API was told: by its URL's path, by the body's shape, or (for a body both chat
 * APIs accept) by the earlier requests.
 */
export type DetectedBy = 'url' | 'shape' | 'log'

/** The API of a request, or why it cannot be told. */
export type ApiDetection = { readonly api: RequestApi; readonly by: DetectedBy } | { readonly error: string }

/**
 * Tells a request's API. A URL whose path ends in `/chat/completions`, `/responses`,
 * `/messages`, `:generateContent` or `:streamGenerateContent` decides; otherwise the body's
 * shape does: `contents` is Gemini, `input` or `instructions` is Responses, `messages` is Chat
 * Completions or Anthropic Messages, told apart by fields only one of them has. A `messages`
 * body with no such field and a `max_tokens` (which Anthropic requires) could be either: it takes
 * the API of the last `messages` request before it (`previous`), or is unreadable.
 */
export function detectApi(request: WireRequest, previous: RequestApi | undefined): ApiDetection {
  const path = request.url === undefined ? undefined : pathOf(request.url)
  if (path !== undefined) {
    if (path.endsWith('/chat/completions')) return { api: 'openai-chat', by: 'url' }
    if (path.endsWith('/responses')) return { api: 'openai-responses', by: 'url' }
    if (path.endsWith('/messages')) return { api: 'anthropic-messages', by: 'url' }
    if (/:(stream)?generateContent$/i.test(path)) return { api: 'gemini', by: 'url' }
  }
  const body = request.body
  if (body.contents !== undefined) return { api: 'gemini', by: 'shape' }
  if (body.input !== undefined || body.instructions !== undefined) return { api: 'openai-responses', by: 'shape' }
  if (body.messages === undefined || body.messages === null) {
    const url =
      request.url === undefined ? '' : ` and its url ${JSON.stringify(request.url)} names no supported endpoint`
    return {
      error:
        'the body has none of "messages" (OpenAI Chat Completions, Anthropic Messages), "input" (OpenAI ' +
        `Responses) or "contents" (Gemini)${url}`,
    }
  }
  // Its reader says what is wrong with it.
  if (!Array.isArray(body.messages)) return { api: 'openai-chat', by: 'shape' }
  const anthropic = anthropicSigns(request)
  const openai = openAiSigns(body)
  if (anthropic.length && openai.length)
    return {
      error:
        `the body mixes Anthropic Messages fields (${anthropic.join(', ')}) with OpenAI Chat Completions ` +
        `fields (${openai.join(', ')}); record the request url to say which API it was sent to`,
    }
  if (anthropic.length) return { api: 'anthropic-messages', by: 'shape' }
  if (openai.length || body.max_tokens === undefined) return { api: 'openai-chat', by: 'shape' }
  if (previous === 'openai-chat' || previous === 'anthropic-messages') return { api: previous, by: 'log' }
  return {
    error:
      'the body could be OpenAI Chat Completions or Anthropic Messages (plain messages and max_tokens, ' +
      'no field only one of them has, no earlier line to go by); record the request url',
  }
}

function pathOf(url: string): string | undefined {
  try {
    return new URL(url, 'http://log.invalid').pathname
  } catch {
    return undefined
  }
}

const ANTHROPIC_FIELDS = [
  'system',
  'stop_sequences',
  'thinking',
  'top_k',
  'output_config',
  'anthropic_version',
  'container',
  'mcp_servers',
]
const ANTHROPIC_BLOCKS = [
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'document',
  'server_tool_use',
  'search_result',
]
const OPENAI_FIELDS = [
  'reasoning_effort',
  'max_completion_tokens',
  'stop',
  'stream_options',
  'response_format',
  'n',
  'logprobs',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'functions',
  'function_call',
  'parallel_tool_calls',
  'logit_bias',
  'modalities',
  'prediction',
  'store',
]
const OPENAI_ROLES = ['system', 'developer', 'tool', 'function']
const OPENAI_BLOCKS = ['image_url', 'input_audio', 'file', 'refusal']

/** Fields, roles, block and tool shapes only Anthropic Messages has (and its `anthropic-version` header). */
function anthropicSigns(request: WireRequest): string[] {
  const body = request.body
  const signs = ANTHROPIC_FIELDS.filter((field) => body[field] !== undefined)
  if (request.headers['anthropic-version'] !== undefined) signs.push('the anthropic-version header')
  // Not cache_control: OpenRouter and LiteLLM accept it on Chat Completions parts too.
  if (messageBlocks(body).some((block) => ANTHROPIC_BLOCKS.includes(block.type as string)))
    signs.push('Anthropic content blocks')
  if (Array.isArray(body.tools) && body.tools.some((tool) => isRecord(tool) && tool.input_schema !== undefined))
    signs.push('tools with input_schema')
  return signs
}

/** Fields, roles, message keys, block and tool shapes only Chat Completions has. */
function openAiSigns(body: Readonly<Record<string, unknown>>): string[] {
  const signs = OPENAI_FIELDS.filter((field) => body[field] !== undefined)
  const messages = (body.messages as unknown[]).filter(isRecord)
  if (messages.some((message) => OPENAI_ROLES.includes(message.role as string)))
    signs.push('system/developer/tool roles')
  if (messages.some((message) => message.tool_calls !== undefined || message.tool_call_id !== undefined))
    signs.push('tool_calls')
  if (messageBlocks(body).some((block) => OPENAI_BLOCKS.includes(block.type as string)))
    signs.push('OpenAI content parts')
  if (
    Array.isArray(body.tools) &&
    body.tools.some((tool) => isRecord(tool) && tool.type === 'function' && tool.function !== undefined)
  )
    signs.push('function tools')
  return signs
}

function messageBlocks(body: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>>[] {
  const blocks: Readonly<Record<string, unknown>>[] = []
  for (const message of body.messages as unknown[])
    if (isRecord(message) && Array.isArray(message.content))
      for (const block of message.content) if (isRecord(block)) blocks.push(block)
  return blocks
}
