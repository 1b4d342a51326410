import { deepFreeze } from './deep-freeze.ts'

/**
 * Visible model or user text. `signature` is an opaque provider token that must be replayed
 * with the block (Gemini's `thoughtSignature` on a text part); it is never shown or parsed.
 */
export interface TextBlock {
  readonly type: 'text'
  readonly text: string
  readonly signature?: string
}

/**
 * Model reasoning ("thinking"). `signature` is the provider's opaque integrity token
 * (Anthropic's thinking signature, OpenAI Responses' encrypted reasoning item), which must be
 * sent back unchanged when the turn is replayed.
 */
export interface ReasoningBlock {
  readonly type: 'reasoning'
  readonly text: string
  readonly signature?: string
}

/** An inline image: base64 `data` of the given IANA `mediaType` (e.g. `image/png`). */
export interface ImageBlock {
  readonly type: 'image'
  readonly mediaType: string
  readonly data: string
}

/**
 * A tool invocation requested by the model. `arguments` is the model's raw argument string,
 * kept byte for byte forever: it is never parsed and re-serialized, because re-serializing
 * would change the bytes the next request replays. `signature` is an opaque provider token
 * replayed with the call (Gemini's `thoughtSignature` on a function call part).
 */
export interface ToolCallBlock {
  readonly type: 'tool-call'
  readonly id: string
  readonly name: string
  readonly arguments: string
  readonly signature?: string
}

/** Content allowed inside a tool result. */
export type ToolResultContent = TextBlock | ImageBlock

/** The result of one tool call, matched to it by `toolCallId`. */
export interface ToolResultBlock {
  readonly type: 'tool-result'
  readonly toolCallId: string
  readonly content: readonly ToolResultContent[]
  readonly isError?: boolean
}

/** Every content block a message can carry. */
export type ContentBlock = TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock

/** The `type` tag of a content block. */
export type ContentBlockType = ContentBlock['type']

/** A frozen text block; `signature` is kept only when given. */
export function textBlock(text: string, signature?: string): TextBlock {
  assertString(text, 'textBlock(text)')
  if (signature !== undefined) assertString(signature, 'textBlock(signature)')
  return deepFreeze(signature === undefined ? { type: 'text', text } : { type: 'text', text, signature })
}

/** A frozen reasoning block; `signature` is kept only when given. */
export function reasoningBlock(text: string, signature?: string): ReasoningBlock {
  assertString(text, 'reasoningBlock(text)')
  return deepFreeze(signature === undefined ? { type: 'reasoning', text } : { type: 'reasoning', text, signature })
}

/** A frozen image block from base64 data. */
export function imageBlock(mediaType: string, data: string): ImageBlock {
  assertString(mediaType, 'imageBlock(mediaType)')
  assertString(data, 'imageBlock(data)')
  return deepFreeze({ type: 'image', mediaType, data })
}

/** A frozen tool-call block; `argumentsText` is stored exactly as given, `signature` only when given. */
export function toolCallBlock(id: string, name: string, argumentsText: string, signature?: string): ToolCallBlock {
  assertString(id, 'toolCallBlock(id)')
  assertString(name, 'toolCallBlock(name)')
  assertString(argumentsText, 'toolCallBlock(arguments)')
  if (signature !== undefined) assertString(signature, 'toolCallBlock(signature)')
  const signed = signature === undefined ? {} : { signature }
  return deepFreeze({ type: 'tool-call', id, name, arguments: argumentsText, ...signed })
}

/** A frozen tool-result block. A plain string becomes one text block. */
export function toolResultBlock(
  toolCallId: string,
  content: string | readonly ToolResultContent[],
  isError?: boolean,
): ToolResultBlock {
  assertString(toolCallId, 'toolResultBlock(toolCallId)')
  const blocks = typeof content === 'string' ? [textBlock(content)] : content.map((block) => ({ ...block }))
  return deepFreeze({ type: 'tool-result', toolCallId, content: blocks, ...(isError ? { isError: true } : {}) })
}

/** Collects the text of all `text` blocks (reasoning excluded), joined without separator. */
export function textOf(blocks: readonly ContentBlock[]): string {
  let text = ''
  for (const block of blocks) if (block.type === 'text') text += block.text
  return text
}

function assertString(value: unknown, where: string): asserts value is string {
  if (typeof value !== 'string') {
    throw new TypeError(`${where} must be a string, got ${value === null ? 'null' : typeof value}`)
  }
}
