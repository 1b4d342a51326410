import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { isRecord } from '@warmfold/cache-ledger/prefix'

/** The body key that holds an API's messages. */
export type ListKey = 'messages' | 'input' | 'contents'

/** What the warm room reads of a request body: cheap, the system and the last message only. */
export interface WireView {
  readonly listKey: ListKey
  readonly items: readonly unknown[]
  /** Leading items that are the system prompt (Chat and Responses `system`/`developer` messages). */
  readonly head: number
  /** The system prompt's text (`instructions`, `system`, `systemInstruction` or the head messages). */
  readonly systemText: string
  readonly toolCount: number
  /** The text of the last message when it is a user message ('' otherwise). */
  readonly instructionText: string
  /** Whether the last message is a user message with text (an instruction). */
  readonly endsInInstruction: boolean
}

/** The key of an API's message list. */
export function listKeyOf(api: RequestApi): ListKey {
  return api === 'openai-responses' ? 'input' : api === 'gemini' ? 'contents' : 'messages'
}

/** The text of message content: a string, or the `text` of its parts and blocks, joined by newlines. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (isRecord(content)) return textOf(content.parts ?? content.content ?? content.text)
  if (!Array.isArray(content)) return ''
  const texts: string[] = []
  for (const part of content)
    if (typeof part === 'string') texts.push(part)
    else if (isRecord(part) && typeof part.text === 'string') texts.push(part.text)
  return texts.join('\n')
}

/** Whether `item` is a user message of `api` (Responses: a `message` item; Gemini: role `user`). */
export function isUserMessage(api: RequestApi, item: unknown): item is Record<string, unknown> {
  if (!isRecord(item)) return false
  if (api === 'gemini') return item.role === undefined || item.role === 'user'
  if (api === 'openai-responses' && item.type !== undefined && item.type !== 'message') return false
  return item.role === 'user'
}

function isSystemItem(item: unknown): boolean {
  return isRecord(item) && (item.role === 'system' || item.role === 'developer')
}

/** The view of `json` as `api` reads it. */
export function wireViewOf(api: RequestApi, json: Readonly<Record<string, unknown>>): WireView {
  const listKey = listKeyOf(api)
  const raw = json[listKey]
  const items: readonly unknown[] = Array.isArray(raw)
    ? raw
    : typeof raw === 'string'
      ? [{ role: 'user', content: raw }]
      : []
  let head = 0
  if (api === 'openai-chat' || api === 'openai-responses') while (isSystemItem(items[head])) head++
  const system: string[] = []
  if (api === 'openai-responses' && typeof json.instructions === 'string') system.push(json.instructions)
  if (api === 'anthropic-messages') system.push(textOf(json.system))
  if (api === 'gemini') system.push(textOf(json.systemInstruction ?? json.system_instruction))
  for (const item of items.slice(0, head)) system.push(textOf(isRecord(item) ? item.content : undefined))
  const last = items.at(-1)
  const user = items.length > head && isUserMessage(api, last)
  const instructionText = user ? textOf(api === 'gemini' ? last.parts : last.content) : ''
  return {
    listKey,
    items,
    head,
    systemText: system.filter((text) => text !== '').join('\n'),
    toolCount: Array.isArray(json.tools) ? json.tools.length : 0,
    instructionText,
    endsInInstruction: user && instructionText.trim() !== '',
  }
}

/** The model a request names: its body's `model`, or for Gemini the URL's `models/NAME:`. */
export function modelOf(api: RequestApi, json: Readonly<Record<string, unknown>>, url: string): string | undefined {
  if (typeof json.model === 'string') return json.model
  if (api !== 'gemini') return undefined
  const match = /\/models\/([^/:?]+):/.exec(url)
  return match ? decodeURIComponent(match[1] as string) : undefined
}

/** Whether a request asks for structured (JSON) output: a side query such as a classifier, not a summary. */
export function asksStructuredOutput(json: Readonly<Record<string, unknown>>): boolean {
  const format = isRecord(json.response_format) ? json.response_format.type : undefined
  if (format === 'json_schema' || format === 'json_object') return true
  if (isRecord(json.text) && isRecord(json.text.format) && json.text.format.type !== 'text') return true
  if (isRecord(json.output_config) && json.output_config.format !== undefined) return true
  const config = json.generationConfig ?? json.generation_config
  if (!isRecord(config)) return false
  const mime = config.responseMimeType ?? config.response_mime_type
  return (
    (typeof mime === 'string' && mime !== 'text/plain') ||
    config.responseSchema !== undefined ||
    config.responseJsonSchema !== undefined
  )
}

/**
 * The conversation's tool choice when it forces a tool call (Chat and Responses `required` or a
 * named function, Anthropic `any` or a named tool, Gemini mode `ANY`), as JSON; undefined when it
 * lets the model answer in text. A replay keeps it (changing it would change the cache family),
 * so such a replay could only answer with a tool call.
 */
export function forcedToolChoice(api: RequestApi, json: Readonly<Record<string, unknown>>): string | undefined {
  if (api === 'gemini') {
    const config = json.toolConfig ?? json.tool_config
    const calling = isRecord(config) ? (config.functionCallingConfig ?? config.function_calling_config) : undefined
    const mode = isRecord(calling) ? calling.mode : undefined
    return typeof mode === 'string' && mode.toUpperCase() === 'ANY' ? JSON.stringify(config) : undefined
  }
  const choice = json.tool_choice
  if (choice === undefined || choice === null) return undefined
  const forced =
    typeof choice === 'string'
      ? choice === 'required' || choice === 'any'
      : isRecord(choice) && choice.type !== 'auto' && choice.type !== 'none'
  return forced ? JSON.stringify(choice) : undefined
}
