import type { ContentBlock, GenerateOptions, ImageBlock, Message, ToolCallBlock, ToolResultBlock } from '@warmfold/llm'
import type { CacheFields, CacheSettings } from './cache-controls.ts'
import { cacheFields, placeBreakpoints } from './cache-controls.ts'
import type { ChatContentPart, ChatMessage, ChatTool } from './chat-message.ts'
import type { Dialect } from './config.ts'

/**
 * The chat completions request body. Keys are assigned in this order, and `JSON.stringify`
 * keeps insertion order, so the same options always give the same bytes.
 */
export interface ChatCompletionsBody extends CacheFields {
  model: string
  messages: ChatMessage[]
  tools?: ChatTool[]
  thinking?: { type: 'enabled' | 'disabled' }
  reasoning_effort?: string
  temperature?: number
  stop?: string[]
  max_tokens?: number
  max_completion_tokens?: number
  stream: true
  stream_options: { include_usage: true }
}

/** The effort DeepSeek takes as "thinking disabled". */
export const DEEPSEEK_EFFORT_OFF = 'off'

/** Dialects whose servers read earlier reasoning back from `reasoning_content`. */
const REPLAYS_REASONING: ReadonlySet<Dialect> = new Set(['deepseek', 'vllm', 'llamacpp'])

/**
 * Builds the request body for `options`. Deterministic: every object is built in a fixed key
 * order, tool arguments are the model's raw strings, tools keep their order and their
 * `parameters` object is passed as given, and nothing per-request (ids, timestamps,
 * `purpose`) is included. `cache` adds the cache fields: a `prompt_cache_key` derived from
 * `sessionId` (a hash, never the id), `prompt_cache_retention`, and explicit breakpoints,
 * which for a summary call (`purpose: 'compaction'`) end at the message before the trailing
 * instruction.
 */
export function serializeRequest(
  options: GenerateOptions,
  dialect: Dialect,
  cache?: CacheSettings,
): ChatCompletionsBody {
  const body: Partial<ChatCompletionsBody> = {}
  body.model = options.model
  const messages = serializeMessages(options, dialect)
  body.messages = cache?.cacheBreakpoints
    ? placeBreakpoints(messages, options.system !== undefined, instructionLength(options, dialect))
    : messages
  if (options.tools && options.tools.length > 0) {
    body.tools = options.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
  }
  Object.assign(body, effortFields(options.reasoningEffort, dialect))
  if (options.temperature !== undefined) body.temperature = options.temperature
  if (options.stop !== undefined && options.stop.length > 0) body.stop = [...options.stop]
  if (options.maxTokens !== undefined) {
    if (dialect === 'openai') body.max_completion_tokens = options.maxTokens
    else body.max_tokens = options.maxTokens
  }
  Object.assign(body, cacheFields(options, cache))
  body.stream = true
  body.stream_options = { include_usage: true }
  return body as ChatCompletionsBody
}

/** Wire messages of a summary call's trailing instruction (it gets no breakpoint); 0 otherwise. */
function instructionLength(options: GenerateOptions, dialect: Dialect): number {
  const last = options.messages.at(-1)
  return options.purpose === 'compaction' && last ? serializeMessage(last, dialect).length : 0
}

/**
 * The effort fields of a dialect: DeepSeek switches thinking on (`thinking.type: enabled` plus
 * `reasoning_effort`) for every effort but `off`, which disables it; every other dialect sends
 * `reasoning_effort` only when an effort is given.
 */
export function effortFields(
  effort: string | undefined,
  dialect: Dialect,
): Pick<ChatCompletionsBody, 'thinking' | 'reasoning_effort'> {
  if (effort === undefined) return {}
  if (dialect === 'deepseek') {
    return effort === DEEPSEEK_EFFORT_OFF
      ? { thinking: { type: 'disabled' } }
      : { thinking: { type: 'enabled' }, reasoning_effort: effort }
  }
  return { reasoning_effort: effort }
}

/** The wire messages: the system prompt first, then each message in order. */
export function serializeMessages(
  options: Pick<GenerateOptions, 'system' | 'messages'>,
  dialect: Dialect,
): ChatMessage[] {
  const messages: ChatMessage[] = []
  if (options.system !== undefined) messages.push({ role: 'system', content: options.system })
  for (const message of options.messages) messages.push(...serializeMessage(message, dialect))
  return messages
}

/**
 * One message as wire messages. A user message yields its tool results as `tool` messages
 * (in block order) and then, when it has other content, one `user` message.
 */
export function serializeMessage(message: Message, dialect: Dialect): ChatMessage[] {
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: joinText(message.content, '\n') }]
    case 'assistant':
      return [serializeAssistant(message.content, dialect)]
    case 'user': {
      const results = message.content.filter((block): block is ToolResultBlock => block.type === 'tool-result')
      const rest = message.content.filter((block) => block.type !== 'tool-result')
      const wire: ChatMessage[] = results.map((block) => ({
        role: 'tool',
        tool_call_id: block.toolCallId,
        content: toolResultText(block),
      }))
      if (rest.length > 0) wire.push({ role: 'user', content: userContent(rest) })
      return wire
    }
  }
}

function serializeAssistant(content: readonly ContentBlock[], dialect: Dialect): ChatMessage {
  const calls = content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
  const hasText = content.some((block) => block.type === 'text')
  // Assistant text is concatenated without a separator: it reproduces what the model streamed.
  const wire: ChatMessage & { role: 'assistant' } = {
    role: 'assistant',
    content: hasText || calls.length === 0 ? joinText(content, '') : null,
  }
  const reasoning = content.filter((block) => block.type === 'reasoning')
  if (REPLAYS_REASONING.has(dialect) && reasoning.length > 0)
    wire.reasoning_content = reasoning.map((block) => block.text).join('')
  if (calls.length > 0) {
    wire.tool_calls = calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }))
  }
  return wire
}

function userContent(blocks: readonly ContentBlock[]): string | ChatContentPart[] {
  if (blocks.every((block) => block.type === 'text')) return joinText(blocks, '\n')
  const parts: ChatContentPart[] = []
  for (const block of blocks) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text })
    else if (block.type === 'image')
      parts.push({ type: 'image_url', image_url: { url: `data:${block.mediaType};base64,${block.data}` } })
    // Reasoning and tool calls never occur in user messages; they are not prompt content there.
  }
  return parts
}

/**
 * A tool result's text. Chat completions `tool` messages carry text only, so an image becomes a
 * fixed placeholder naming its media type (deterministic, so the prefix stays stable).
 */
export function toolResultText(block: ToolResultBlock): string {
  return block.content.map((part) => (part.type === 'text' ? part.text : imagePlaceholder(part))).join('\n')
}

/** The text that stands in for an image inside a tool result. */
export function imagePlaceholder(image: ImageBlock): string {
  return `[image (${image.mediaType}) omitted: chat completions tool messages carry text only]`
}

function joinText(blocks: readonly ContentBlock[], separator: string): string {
  return blocks
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join(separator)
}
