import type { ContentBlock, GenerateOptions, ImageBlock, Message, ToolDefinition, ToolResultBlock } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'
import { misplacedBlock, unsendable } from '@warmfold/llm/adapter'
import type { PromptCacheRetention, ReasoningSummary } from './config.ts'
import { decodeMessagePhase } from './message-phase.ts'
import type { ReasoningSummaryPart } from './reasoning-signature.ts'
import { decodeReasoningSignature } from './reasoning-signature.ts'

/** A user content part. */
export type InputContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }

/**
 * One item of `input`. No item carries an `id`: with `store: false` the server cannot resolve them (see the README).
 */
export type InputItem =
  | { type: 'message'; role: 'user'; content: InputContent[] }
  | {
      type: 'message'
      role: 'assistant'
      content: Array<{ type: 'output_text'; text: string }>
      phase?: 'commentary' | 'final_answer'
    }
  | { type: 'reasoning'; summary: ReasoningSummaryPart[]; encrypted_content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string | InputContent[] }

/** A function tool. `strict: false`: warmfold's schemas are ordinary JSON Schema, not strict-mode schemas. */
export interface FunctionToolParam {
  type: 'function'
  name: string
  description: string
  parameters: Record<string, unknown>
  strict: false
}

/**
 * The JSON body of one `POST /responses`. Keys are assigned in this fixed order (envelope,
 * cache routing, then `input` last), so the same options always give the same bytes.
 */
export interface ResponsesRequestBody {
  model: string
  /** The system prompt. */
  instructions?: string
  tools?: FunctionToolParam[]
  reasoning?: { effort: string; summary?: 'auto' | 'concise' | 'detailed' }
  max_output_tokens?: number
  temperature?: number
  /** Always `false`: nothing is kept server-side, every request carries the whole conversation. */
  store: false
  /** Always asks for the encrypted reasoning, which is what makes `store: false` replay possible. */
  include: ['reasoning.encrypted_content']
  prompt_cache_key?: string
  prompt_cache_retention?: PromptCacheRetention
  stream: true
  /** The conversation as items, in order. */
  input: InputItem[]
}

/** What serialization needs besides the request. */
export interface SerializeSettings {
  readonly provider: string
  /** `max_output_tokens` when the request sets none; absent, the field is left out. */
  readonly defaultMaxTokens?: number
  readonly reasoningSummary: ReasoningSummary
  /** The `prompt_cache_key` of this request (see `promptCacheKey`), or none. */
  readonly promptCacheKey?: string
  readonly cacheRetention?: PromptCacheRetention
}

/**
 * Turns `options` into the request body. Deterministic: nothing per-request (message ids,
 * sources, `purpose`) is sent, and the session id only as its hashed `prompt_cache_key`, the
 * same for every request of the session.
 *
 * @throws LlmError `INVALID_REQUEST` for `stop` (the Responses API has no stop sequences) and for
 *   content the API cannot take (a `system`-role message, a reasoning or tool-call block in a user
 *   message, an image or tool result in an assistant message).
 */
export function serializeRequest(options: GenerateOptions, settings: SerializeSettings): ResponsesRequestBody {
  if (options.stop !== undefined) {
    throw unsendable(
      settings.provider,
      `GenerateOptions.stop (${JSON.stringify(options.stop)}) has no equivalent in the OpenAI Responses API, ` +
        `which takes no stop sequences; remove stop from the agent or request config`,
    )
  }
  const maxTokens = options.maxTokens ?? settings.defaultMaxTokens
  const summary = settings.reasoningSummary === 'none' ? undefined : settings.reasoningSummary
  return {
    model: options.model,
    ...(options.system === undefined ? {} : { instructions: options.system }),
    ...(options.tools?.length ? { tools: options.tools.map(serializeTool) } : {}),
    ...(options.reasoningEffort === undefined
      ? {}
      : { reasoning: { effort: options.reasoningEffort, ...(summary ? { summary } : {}) } }),
    ...(maxTokens === undefined ? {} : { max_output_tokens: maxTokens }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    store: false,
    include: ['reasoning.encrypted_content'],
    ...(settings.promptCacheKey === undefined ? {} : { prompt_cache_key: settings.promptCacheKey }),
    ...(settings.cacheRetention === undefined ? {} : { prompt_cache_retention: settings.cacheRetention }),
    stream: true,
    input: serializeInput(options.messages, settings.provider),
  }
}

/**
 * The conversation as input items, one or more per message, in order. A user message becomes a
 * `message` item (its text and images) and a `function_call_output` item per tool result, in
 * block order. An assistant message becomes, block by block: a `reasoning` item rebuilt from the
 * block's signature, a `message` item per text block, a `function_call` item per tool call. A
 * reasoning block without this adapter's signature (another provider's, or cut off before the
 * item was done) or without encrypted content cannot be replayed statelessly and is left out.
 */
export function serializeInput(messages: readonly Message[], provider: string): InputItem[] {
  const items: InputItem[] = []
  messages.forEach((message, position) => {
    if (message.role === 'system')
      throw unsendable(
        provider,
        `messages[${position}] has role "system"; send the system prompt as GenerateOptions.system (it becomes ` +
          `instructions)`,
      )
    if (message.role === 'assistant') items.push(...assistantItems(message.content, position, provider))
    else items.push(...userItems(message.content, position, provider))
  })
  return items
}

function userItems(blocks: readonly ContentBlock[], position: number, provider: string): InputItem[] {
  const items: InputItem[] = []
  let parts: InputContent[] = []
  const flush = () => {
    if (parts.length) items.push({ type: 'message', role: 'user', content: parts })
    parts = []
  }
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') parts.push({ type: 'input_text', text: block.text })
        break
      case 'image':
        parts.push(imagePart(block))
        break
      case 'tool-result':
        flush()
        items.push({ type: 'function_call_output', call_id: block.toolCallId, output: toolOutput(block) })
        break
      default:
        throw misplacedBlock(provider, position, 'user', block.type)
    }
  }
  flush()
  return items
}

function assistantItems(blocks: readonly ContentBlock[], position: number, provider: string): InputItem[] {
  const items: InputItem[] = []
  for (const block of blocks) {
    switch (block.type) {
      case 'reasoning': {
        const item = decodeReasoningSignature(block.signature)
        // The summary is sent exactly as received, the id never (store: false cannot resolve it).
        if (item?.encrypted_content)
          items.push({
            type: 'reasoning',
            summary: item.summary.map((part) => ({ type: part.type, text: part.text })),
            encrypted_content: item.encrypted_content,
          })
        break
      }
      case 'text': {
        if (block.text === '') break
        const phase = decodeMessagePhase(block.signature)
        items.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: block.text }],
          ...(phase ? { phase } : {}),
        })
        break
      }
      case 'tool-call':
        // The model's raw argument string, byte for byte.
        items.push({ type: 'function_call', call_id: block.id, name: block.name, arguments: block.arguments })
        break
      default:
        throw misplacedBlock(provider, position, 'assistant', block.type)
    }
  }
  return items
}

/**
 * A tool result's `output`: its text when it has only text parts (joined as they are), else the
 * parts as `input_text` / `input_image` content. The Responses API has no error flag on a result;
 * `isError` is not sent, the text says what failed.
 */
function toolOutput(block: ToolResultBlock): string | InputContent[] {
  if (block.content.every((part) => part.type === 'text'))
    return block.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
  return block.content.flatMap((part): InputContent[] =>
    part.type === 'image' ? [imagePart(part)] : part.text === '' ? [] : [{ type: 'input_text', text: part.text }],
  )
}

function serializeTool(tool: ToolDefinition): FunctionToolParam {
  // Canonical key order, so a schema assembled in another key order renders the same bytes.
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: JSON.parse(canonicalJson(tool.parameters)) as Record<string, unknown>,
    strict: false,
  }
}

function imagePart(block: ImageBlock): InputContent {
  return { type: 'input_image', image_url: `data:${block.mediaType};base64,${block.data}`, detail: 'auto' }
}
