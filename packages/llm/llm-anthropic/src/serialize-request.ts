import type {
  Base64ImageSource,
  ContentBlockParam,
  ImageBlockParam,
  TextBlockParam,
  ThinkingBlockParam,
  Tool,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from '@anthropic-ai/sdk/resources/messages'
import type { ContentBlock, GenerateOptions, ImageBlock, Message, ToolDefinition } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'
import { misplacedBlock, parseToolArguments, unsendable, unsupportedEffort } from '@warmfold/llm/adapter'
import { THINKING_OFF } from './config.ts'

/** One Anthropic message: consecutive warmfold messages of the same role are merged into one. */
export interface AnthropicMessage {
  /** Tool results are `user` turns, as in warmfold. */
  role: 'user' | 'assistant'
  /** The blocks of every merged message, in order. */
  content: ContentBlockParam[]
}

/**
 * The JSON body of one streaming Messages API request. Keys are assigned in a fixed order
 * (envelope, then tools → system → messages, Anthropic's cache hierarchy), so the same options
 * always give the same bytes.
 */
export interface AnthropicRequestBody {
  /** The model id, as configured. */
  model: string
  /** `maxTokens`, else the model's `defaultMaxTokens` (Anthropic requires it). */
  max_tokens: number
  /** Always streamed. */
  stream: true
  /** Extended thinking, from `reasoningEffort` and `thinkingBudgets`; absent for `off` or no effort. */
  thinking?: { type: 'enabled'; budget_tokens: number }
  /** Sent as given; the installed SDK's types no longer list it, the API decides. */
  temperature?: number
  /** `stop`, as given. */
  stop_sequences?: string[]
  /** Tool definitions in the given order, `input_schema` in canonical key order. */
  tools?: Tool[]
  /** One text block, so it can carry a `cache_control` breakpoint. */
  system?: TextBlockParam[]
  /** The conversation, consecutive same-role messages merged. */
  messages: AnthropicMessage[]
}

/** What serialization needs besides the request. */
export interface SerializeSettings {
  /** Provider id, for error messages. */
  readonly provider: string
  /** `max_tokens` when the request sets no `maxTokens`. */
  readonly defaultMaxTokens: number
  /** `budget_tokens` per effort. */
  readonly thinkingBudgets: { readonly [effort: string]: number }
}

/**
 * Turns `options` into the request body, without breakpoints (see `placeBreakpoints`).
 * Deterministic: nothing per-request (ids, sources, timestamps, session id) is sent.
 *
 * @throws LlmError `UNSUPPORTED_REASONING_EFFORT` for an effort without a thinking budget, and
 *   `INVALID_REQUEST` for content Anthropic cannot take (a `system`-role message, a reasoning
 *   block in a user message, an image or tool result in an assistant message).
 */
export function serializeRequest(options: GenerateOptions, settings: SerializeSettings): AnthropicRequestBody {
  const thinking = thinkingFor(options.reasoningEffort, settings, options.model)
  const tools = options.tools?.length ? options.tools.map(serializeTool) : undefined
  return {
    model: options.model,
    max_tokens: options.maxTokens ?? settings.defaultMaxTokens,
    stream: true,
    ...(thinking ? { thinking } : {}),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.stop === undefined ? {} : { stop_sequences: [...options.stop] }),
    ...(tools ? { tools } : {}),
    ...(options.system ? { system: [{ type: 'text' as const, text: options.system }] } : {}),
    messages: serializeMessages(options.messages, settings.provider),
  }
}

/**
 * Serializes the conversation. Consecutive messages of one role (several tool results in a row,
 * or the compaction instruction after a tool result) become one Anthropic message whose blocks
 * keep their order, because the API takes alternating turns. A message left with no block (only
 * an unsigned reasoning block, or empty text) is skipped.
 */
export function serializeMessages(messages: readonly Message[], provider: string): AnthropicMessage[] {
  const result: AnthropicMessage[] = []
  messages.forEach((message, position) => {
    const content =
      message.role === 'assistant'
        ? assistantContent(message, position, provider)
        : userContent(message, position, provider)
    if (content.length === 0) return
    const role = message.role === 'assistant' ? 'assistant' : 'user'
    const last = result.at(-1)
    if (last && last.role === role) last.content.push(...content)
    else result.push({ role, content })
  })
  return result
}

function thinkingFor(
  effort: string | undefined,
  settings: SerializeSettings,
  model: string,
): AnthropicRequestBody['thinking'] {
  if (effort === undefined || effort === THINKING_OFF) return undefined
  if (!Object.hasOwn(settings.thinkingBudgets, effort)) {
    const known = [THINKING_OFF, ...Object.keys(settings.thinkingBudgets)].join(', ')
    throw unsupportedEffort({ provider: settings.provider, model }, effort, 'thinking budget', known)
  }
  return { type: 'enabled', budget_tokens: settings.thinkingBudgets[effort]! }
}

function serializeTool(tool: ToolDefinition): Tool {
  // Canonical key order, so a schema assembled in another key order renders the same bytes.
  return {
    name: tool.name,
    description: tool.description,
    input_schema: JSON.parse(canonicalJson(tool.parameters)) as Tool['input_schema'],
  }
}

function userContent(message: Message, position: number, provider: string): ContentBlockParam[] {
  if (message.role === 'system') {
    throw unsendable(
      provider,
      `messages[${position}] has role "system"; Anthropic takes the system prompt only as GenerateOptions.system`,
    )
  }
  const content: ContentBlockParam[] = []
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') content.push(textParam(block.text))
        break
      case 'image':
        content.push(imageParam(block))
        break
      case 'tool-result': {
        const result: ToolResultBlockParam = {
          type: 'tool_result',
          tool_use_id: block.toolCallId,
          content: block.content.flatMap((part): Array<TextBlockParam | ImageBlockParam> =>
            part.type === 'image' ? [imageParam(part)] : part.text === '' ? [] : [textParam(part.text)],
          ),
        }
        if (block.isError) result.is_error = true
        content.push(result)
        break
      }
      default:
        throw misplacedBlock(provider, position, 'user', block.type)
    }
  }
  return content
}

function assistantContent(message: Message, position: number, provider: string): ContentBlockParam[] {
  const thinking: ThinkingBlockParam[] = []
  const text: TextBlockParam[] = []
  const calls: ToolUseBlockParam[] = []
  for (const block of message.content as readonly ContentBlock[]) {
    switch (block.type) {
      case 'reasoning':
        // Anthropic verifies every replayed thinking block by its signature; reasoning without
        // one (another provider's, or cut off by an abort) cannot be replayed and is left out.
        if (block.signature !== undefined && block.signature !== '')
          thinking.push({ type: 'thinking', thinking: block.text, signature: block.signature })
        break
      case 'text':
        if (block.text !== '') text.push(textParam(block.text))
        break
      case 'tool-call':
        calls.push({ type: 'tool_use', id: block.id, name: block.name, input: parseToolArguments(block.arguments) })
        break
      default:
        throw misplacedBlock(provider, position, 'assistant', block.type)
    }
  }
  return [...thinking, ...text, ...calls]
}

function textParam(text: string): TextBlockParam {
  return { type: 'text', text }
}

function imageParam(block: ImageBlock): ImageBlockParam {
  // Media types outside Anthropic's list are sent as given; the API answers.
  return {
    type: 'image',
    source: { type: 'base64', media_type: block.mediaType as Base64ImageSource['media_type'], data: block.data },
  }
}
