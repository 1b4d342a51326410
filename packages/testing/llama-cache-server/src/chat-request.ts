import type { PromptInput, PromptMessage, PromptToolCall } from './render-prompt.ts'

/** A malformed request. `message` names the offending field; the server answers HTTP 400. */
export class ChatRequestError extends Error {
  override readonly name = 'ChatRequestError'
}

/** The parts of a `POST /v1/chat/completions` body the server acts on. */
export interface ChatRequest {
  /** Template variables; `reasoning_effort` already resolved from `reasoning_effort`/`thinking`. */
  readonly prompt: PromptInput
  /** `model` as sent, echoed in the response; `undefined` when absent. */
  readonly model: string | undefined
  /** `max_completion_tokens` ?? `max_tokens`; `undefined` means the server default. */
  readonly maxTokens: number | undefined
  readonly stream: boolean
  /** `stream_options.include_usage`: send a final chunk with `usage` and empty `choices`. */
  readonly includeUsage: boolean
}

type JsonObject = { readonly [key: string]: unknown }

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const

/** A field that is present: neither absent nor `null` (both mean "not given" on the wire). */
function given(value: unknown): boolean {
  return value !== undefined && value !== null
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function fail(field: string, expectation: string, value: unknown): never {
  const shown = value === undefined ? 'nothing' : JSON.stringify(value)
  throw new ChatRequestError(`${field} ${expectation}, got ${shown.length > 80 ? `${shown.slice(0, 77)}...` : shown}`)
}

/** `content` as a string: a string as is, an array of text parts joined with `\n`. */
function flattenContent(value: unknown, field: string): string {
  if (typeof value === 'string') return value
  if (!Array.isArray(value)) fail(field, 'must be a string or an array of text parts', value)
  return value
    .map((part, index) => {
      if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
        fail(
          `${field}[${index}]`,
          "must be a text part { type: 'text', text: string } (no other part types are supported)",
          part,
        )
      }
      return part.text
    })
    .join('\n')
}

function parseToolCall(value: unknown, field: string): PromptToolCall {
  if (!isObject(value)) fail(field, 'must be an object', value)
  if (typeof value.id !== 'string') fail(`${field}.id`, 'must be a string', value.id)
  if (value.type !== undefined && value.type !== 'function') fail(`${field}.type`, "must be 'function'", value.type)
  const callFunction = value.function
  if (!isObject(callFunction)) fail(`${field}.function`, 'must be an object', callFunction)
  if (typeof callFunction.name !== 'string') fail(`${field}.function.name`, 'must be a string', callFunction.name)
  if (typeof callFunction.arguments !== 'string') {
    fail(`${field}.function.arguments`, 'must be a string (the raw JSON text of the arguments)', callFunction.arguments)
  }
  return { id: value.id, type: 'function', function: { name: callFunction.name, arguments: callFunction.arguments } }
}

function parseMessage(value: unknown, field: string): PromptMessage {
  if (!isObject(value)) fail(field, 'must be an object', value)
  const role = value.role
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    fail(`${field}.role`, `must be one of ${ROLES.join(', ')}`, role)
  }
  if (role === 'assistant') {
    const content = given(value.content) ? flattenContent(value.content, `${field}.content`) : null
    const reasoning = value.reasoning_content
    if (given(reasoning) && typeof reasoning !== 'string')
      fail(`${field}.reasoning_content`, 'must be a string', reasoning)
    const calls = value.tool_calls
    if (given(calls) && !Array.isArray(calls)) fail(`${field}.tool_calls`, 'must be an array', calls)
    return {
      role,
      content,
      ...(typeof reasoning === 'string' ? { reasoning_content: reasoning } : {}),
      ...(Array.isArray(calls)
        ? { tool_calls: calls.map((call, index) => parseToolCall(call, `${field}.tool_calls[${index}]`)) }
        : {}),
    }
  }
  if (!given(value.content)) fail(`${field}.content`, `is required for a ${role} message`, value.content)
  const content = flattenContent(value.content, `${field}.content`)
  if (role === 'tool') {
    if (typeof value.tool_call_id !== 'string') fail(`${field}.tool_call_id`, 'must be a string', value.tool_call_id)
    return { role, content, tool_call_id: value.tool_call_id }
  }
  return { role: role as PromptMessage['role'], content }
}

function optionalPositiveInteger(body: JsonObject, field: string): number | undefined {
  const value = body[field]
  if (!given(value)) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    fail(field, 'must be a positive integer', value)
  return value
}

/**
 * Resolves the effort the template renders at the top: DeepSeek's `thinking: { type: 'disabled' }`
 * renders `none` (no reasoning), otherwise `reasoning_effort` as sent, otherwise nothing.
 */
function resolveReasoningEffort(body: JsonObject): string | undefined {
  const thinking = body.thinking
  if (given(thinking) && (!isObject(thinking) || (thinking.type !== 'enabled' && thinking.type !== 'disabled')))
    fail('thinking', "must be { type: 'enabled' | 'disabled' }", thinking)
  const effort = body.reasoning_effort
  if (given(effort) && (typeof effort !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(effort)))
    fail('reasoning_effort', 'must be a word such as low, medium, high or max', effort)
  if (isObject(thinking) && thinking.type === 'disabled') return 'none'
  return typeof effort === 'string' ? effort : undefined
}

/**
 * Validates an OpenAI chat-completions body and turns it into template variables.
 * Sampling fields (`temperature`, `top_p`, `seed`, `stop`, ...) and `tool_choice` are accepted and
 * ignored: decoding is always greedy and they are not prompt bytes.
 *
 * @throws ChatRequestError naming the first bad field.
 */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) fail('the request body', 'must be a JSON object', body)
  if (body.model !== undefined && typeof body.model !== 'string') fail('model', 'must be a string', body.model)
  const messages = body.messages
  if (!Array.isArray(messages) || messages.length === 0) fail('messages', 'must be a non-empty array', messages)
  const parsedMessages = messages.map((message, index) => parseMessage(message, `messages[${index}]`))
  const tools = body.tools
  if (given(tools)) {
    if (!Array.isArray(tools)) fail('tools', 'must be an array', tools)
    tools.forEach((tool, index) => {
      if (!isObject(tool) || !isObject(tool.function) || typeof tool.function.name !== 'string') {
        fail(`tools[${index}]`, "must be { type: 'function', function: { name, ... } }", tool)
      }
    })
  }
  const maxTokens =
    optionalPositiveInteger(body, 'max_completion_tokens') ?? optionalPositiveInteger(body, 'max_tokens')
  if (given(body.n) && body.n !== 1) fail('n', 'must be 1 (one choice per request)', body.n)
  if (given(body.stream) && typeof body.stream !== 'boolean') fail('stream', 'must be a boolean', body.stream)
  const streamOptions = body.stream_options
  if (given(streamOptions) && !isObject(streamOptions)) fail('stream_options', 'must be an object', streamOptions)
  const includeUsage = isObject(streamOptions) ? streamOptions.include_usage : undefined
  if (given(includeUsage) && typeof includeUsage !== 'boolean')
    fail('stream_options.include_usage', 'must be a boolean', includeUsage)
  const reasoningEffort = resolveReasoningEffort(body)
  return {
    prompt: {
      messages: parsedMessages,
      ...(Array.isArray(tools) && tools.length > 0 ? { tools } : {}),
      ...(reasoningEffort === undefined ? {} : { reasoning_effort: reasoningEffort }),
      add_generation_prompt: true,
    },
    model: body.model,
    maxTokens,
    stream: body.stream === true,
    includeUsage: includeUsage === true,
  }
}
