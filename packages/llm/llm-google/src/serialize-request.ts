import type { ContentBlock, GenerateOptions, Message, ToolDefinition, ToolResultBlock } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'
import { misplacedBlock, parseToolArguments, unsendable } from '@warmfold/llm/adapter'
import type { ThinkingTable } from './default-thinking.ts'
import type { WireThinkingConfig } from './thinking.ts'
import { thinkingConfigFor } from './thinking.ts'

/**
 * Prefix of the ids this adapter makes up for a `functionCall` that came without one (Gemini 2.5
 * sends none; Gemini 3 always does). A made-up id is never sent back: the call and its response are
 * then matched by name and position, as the API does for calls without ids.
 */
export const SYNTHETIC_CALL_ID_PREFIX = 'gemini-call-'

/**
 * One part, keys in the order the SDK's `partToMldev` writes them (`functionCall`,
 * `functionResponse`, `inlineData`, `text`, `thought`, `thoughtSignature`).
 */
export interface GeminiPart {
  functionCall?: { args: Record<string, unknown>; id?: string; name: string }
  functionResponse?: { id?: string; name: string; response: { output: string } | { error: string } }
  inlineData?: { mimeType: string; data: string }
  text?: string
  thought?: true
  thoughtSignature?: string
}

/** One turn: `parts`, then `role` (the SDK's order). */
export interface GeminiContent {
  parts: GeminiPart[]
  role: 'user' | 'model'
}

/**
 * One function declaration; `parametersJsonSchema` takes JSON Schema as is
 * (`parameters` takes Google's Schema subset).
 */
export interface GeminiFunctionDeclaration {
  name: string
  description: string
  parametersJsonSchema: unknown
}

/** `generationConfig`, keys in the SDK's `generateContentConfigToMldev` order. */
export interface GeminiGenerationConfig {
  temperature?: number
  maxOutputTokens?: number
  stopSequences?: string[]
  thinkingConfig?: WireThinkingConfig
}

/**
 * The JSON body of one `streamGenerateContent` request exactly as the SDK sends it: `contents`,
 * then `systemInstruction`, `tools`, and `generationConfig` (always present, `{}` when empty),
 * because the SDK's converter writes them in that order whatever order it is given. The model id
 * is in the URL, not the body.
 */
export interface GeminiRequestBody {
  contents: GeminiContent[]
  systemInstruction?: { parts: Array<{ text: string }> }
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>
  generationConfig: GeminiGenerationConfig
}

/** What serialization needs besides the request. */
export interface SerializeSettings {
  /** `maxOutputTokens` when the request sets no `maxTokens`; omitted, none is sent. */
  readonly defaultMaxTokens?: number
  /** The model's thinking table (budgets or levels). */
  readonly thinking?: ThinkingTable
  /** Whether to ask for thought summaries. */
  readonly includeThoughts: boolean
}

/**
 * Turns `options` into the request body. Deterministic: nothing per request (ids made up by the
 * adapter, sources, timestamps, session id, purpose) is sent.
 * @throws LlmError `UNSUPPORTED_REASONING_EFFORT` for an effort outside the model's table, and
 *   `INVALID_REQUEST` for content Gemini cannot take (a `system`-role message, a tool result whose
 *   call is not in the conversation, a block in the wrong role).
 */
export function serializeRequest(options: GenerateOptions, settings: SerializeSettings): GeminiRequestBody {
  const where = { provider: options.provider, model: options.model, includeThoughts: settings.includeThoughts }
  const thinkingConfig = thinkingConfigFor(options.reasoningEffort, settings.thinking, where)
  const maxOutputTokens = options.maxTokens ?? settings.defaultMaxTokens
  const generationConfig: GeminiGenerationConfig = {
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
    ...(options.stop === undefined ? {} : { stopSequences: [...options.stop] }),
    ...(thinkingConfig ? { thinkingConfig } : {}),
  }
  return {
    contents: serializeContents(options.messages, options.provider),
    ...(options.system ? { systemInstruction: { parts: [{ text: options.system }] } } : {}),
    ...(options.tools?.length ? { tools: [{ functionDeclarations: options.tools.map(serializeTool) }] } : {}),
    generationConfig,
  }
}

/**
 * Serializes the conversation. Consecutive messages of one role (several tool results, or the
 * compaction instruction after a tool result) become one content whose parts keep their order,
 * so the function responses of one model turn answer it in a single user turn. A message left
 * with no part is skipped.
 */
export function serializeContents(messages: readonly Message[], provider: string): GeminiContent[] {
  const calls = new Map<string, string>()
  const contents: GeminiContent[] = []
  messages.forEach((message, position) => {
    if (message.role === 'system')
      throw unsendable(
        provider,
        `messages[${position}] has role "system"; Gemini takes the system prompt only as GenerateOptions.system`,
      )
    const parts =
      message.role === 'assistant'
        ? modelParts(message, position, provider, calls)
        : userParts(message, position, provider, calls)
    if (parts.length === 0) return
    const role = message.role === 'assistant' ? 'model' : 'user'
    const last = contents.at(-1)
    if (last && last.role === role) last.parts.push(...parts)
    else contents.push({ parts, role })
  })
  return contents
}

/** Whether `id` was made up by the adapter (and is therefore never sent). */
export function isSyntheticCallId(id: string): boolean {
  return id.startsWith(SYNTHETIC_CALL_ID_PREFIX)
}

function serializeTool(tool: ToolDefinition): GeminiFunctionDeclaration {
  // Canonical key order, so a schema assembled in another key order renders the same bytes.
  return {
    name: tool.name,
    description: tool.description,
    parametersJsonSchema: JSON.parse(canonicalJson(tool.parameters)),
  }
}

function modelParts(message: Message, position: number, provider: string, calls: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = []
  for (const block of message.content as readonly ContentBlock[]) {
    const signature = 'signature' in block && block.signature ? { thoughtSignature: block.signature } : {}
    switch (block.type) {
      case 'reasoning':
        // A thought summary goes back as the thought part it came as, with its signature.
        if (block.text !== '' || signature.thoughtSignature)
          parts.push({ text: block.text, thought: true, ...signature })
        break
      case 'text':
        // An empty text part can carry the turn's signature (Gemini sends one at the end of a stream).
        if (block.text !== '' || signature.thoughtSignature) parts.push({ text: block.text, ...signature })
        break
      case 'tool-call':
        calls.set(block.id, block.name)
        parts.push({
          functionCall: {
            args: parseToolArguments(block.arguments),
            ...(isSyntheticCallId(block.id) ? {} : { id: block.id }),
            name: block.name,
          },
          ...signature,
        })
        break
      default:
        throw misplacedBlock(provider, position, 'assistant', block.type)
    }
  }
  return parts
}

function userParts(message: Message, position: number, provider: string, calls: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = []
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') parts.push({ text: block.text })
        break
      case 'image':
        parts.push({ inlineData: { mimeType: block.mediaType, data: block.data } })
        break
      case 'tool-result':
        parts.push(...resultParts(block, position, provider, calls))
        break
      default:
        throw misplacedBlock(provider, position, 'user', block.type)
    }
  }
  return parts
}

function resultParts(
  block: ToolResultBlock,
  position: number,
  provider: string,
  calls: Map<string, string>,
): GeminiPart[] {
  const name = calls.get(block.toolCallId)
  if (name === undefined) {
    throw unsendable(
      provider,
      `messages[${position}] answers tool call "${block.toolCallId}", which no earlier assistant message made; ` +
        `Gemini matches a function response to its call by name`,
    )
  }
  const text = block.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('')
  // The documented keys: "output" for the result, "error" for a failure (FunctionResponse.response).
  const response = block.isError ? { error: text } : { output: text }
  const images = block.content.flatMap((part): GeminiPart[] =>
    part.type === 'image' ? [{ inlineData: { mimeType: part.mediaType, data: part.data } }] : [],
  )
  return [
    { functionResponse: { ...(isSyntheticCallId(block.toolCallId) ? {} : { id: block.toolCallId }), name, response } },
    ...images,
  ]
}
