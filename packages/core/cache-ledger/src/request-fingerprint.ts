import { createHash } from 'node:crypto'
import type { ContentBlock, GenerateOptions, Message, MessageRole, ToolDefinition } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'

/** The settings that decide a request's cache family, in the order they are compared. */
export const ENVELOPE_FIELDS = ['provider', 'model', 'reasoningEffort', 'temperature', 'stop'] as const

/** One envelope setting. */
export type EnvelopeField = (typeof ENVELOPE_FIELDS)[number]

/** One segment of the canonical prompt: a tool, the system prompt, or one content block of a message. */
export interface PromptSegment {
  /** A 96-bit hash of the segment's canonical text (never the text itself). */
  readonly hash: string
  /** Characters of the segment's canonical text. */
  readonly chars: number
}

/** Where one message sits among the segments. */
export interface MessageShape {
  readonly role: MessageRole
  /** Index of its first segment. */
  readonly start: number
  /** Number of segments (content blocks). */
  readonly blocks: number
  /** A user message of text blocks only: what a summary call's trailing instruction looks like. */
  readonly instruction: boolean
}

/**
 * A request as the ledger keeps it: hashes and lengths of the envelope settings, the tools, the
 * system prompt and each message block, never the bodies. Segments are in prompt order: tools,
 * system, then each message's blocks.
 */
export interface RequestFingerprint {
  /** The cache family: one key per distinct envelope. */
  readonly family: string
  /** Hash of each envelope setting, in {@link ENVELOPE_FIELDS} order. */
  readonly envelope: readonly string[]
  readonly segments: readonly PromptSegment[]
  /** Number of tool segments (they come first). */
  readonly tools: number
  /** Whether the segment after the tools is the system prompt. */
  readonly system: boolean
  readonly messages: readonly MessageShape[]
  /** Characters of the canonical prompt. */
  readonly chars: number
}

/** The part of a prompt a segment belongs to. */
export type SegmentPart = { readonly part: 'tools'; readonly index: number } | { readonly part: 'system' } | { readonly part: 'message'; readonly index: number; readonly role: MessageRole }

/** A 96-bit hash of `text`, as 16 base64url characters. */
export function hashText(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 16)
}

interface MessagePrint {
  readonly role: MessageRole
  readonly segments: readonly PromptSegment[]
  readonly instruction: boolean
}

/**
 * Fingerprints requests. The canonical text of a segment is the test kit's: `canonicalJson({ tool })`
 * per tool, `canonicalJson({ system })`, and per message block `canonicalJson({ role, block })` for
 * the first block and `canonicalJson({ block })` for the others, so character counts match the
 * prefix-cache simulator's.
 *
 * Frozen messages and tool lists (everything `ctx.llm` sends is frozen) are hashed once and
 * remembered by identity, so a long session costs one hash per new message.
 */
export class Fingerprinter {
  private readonly messagePrints = new WeakMap<Message, MessagePrint>()
  private readonly toolPrints = new WeakMap<readonly ToolDefinition[], readonly PromptSegment[]>()
  private lastSystem?: { readonly text: string; readonly segment: PromptSegment }
  private readonly envelopeHashes = new Map<string, string>()

  /** The fingerprint of `request`. */
  fingerprint(request: Pick<GenerateOptions, EnvelopeField | 'system' | 'tools' | 'messages'>): RequestFingerprint {
    const envelope = ENVELOPE_FIELDS.map((field) => this.envelopeHash(request[field]))
    const segments: PromptSegment[] = request.tools?.length ? [...this.tools(request.tools)] : []
    const tools = segments.length
    const system = !!request.system
    if (request.system) segments.push(this.system(request.system))
    const messages: MessageShape[] = []
    for (const message of request.messages) {
      const print = this.message(message)
      messages.push({ role: print.role, start: segments.length, blocks: print.segments.length, instruction: print.instruction })
      for (const segment of print.segments) segments.push(segment)
    }
    let chars = 0
    for (const segment of segments) chars += segment.chars
    return { family: envelope.join('.'), envelope, segments, tools, system, messages, chars }
  }

  private envelopeHash(value: unknown): string {
    const text = canonicalJson(value ?? null)
    let hash = this.envelopeHashes.get(text)
    if (hash === undefined) {
      hash = hashText(text)
      // Envelope values are a handful of settings; the cap only guards against a caller that varies them per request.
      if (this.envelopeHashes.size > 1024) this.envelopeHashes.clear()
      this.envelopeHashes.set(text, hash)
    }
    return hash
  }

  private tools(tools: readonly ToolDefinition[]): readonly PromptSegment[] {
    let prints = this.toolPrints.get(tools)
    if (!prints) {
      prints = tools.map((tool) => segmentOf(canonicalJson({ tool })))
      // Only a frozen list cannot change after it was hashed.
      if (Object.isFrozen(tools)) this.toolPrints.set(tools, prints)
    }
    return prints
  }

  private system(text: string): PromptSegment {
    if (this.lastSystem?.text !== text) this.lastSystem = { text, segment: segmentOf(canonicalJson({ system: text })) }
    return this.lastSystem.segment
  }

  private message(message: Message): MessagePrint {
    let print = this.messagePrints.get(message)
    if (!print) {
      const segments = message.content.map((block: ContentBlock, index) => segmentOf(index === 0 ? canonicalJson({ role: message.role, block }) : canonicalJson({ block })))
      print = { role: message.role, segments, instruction: message.role === 'user' && message.content.every((block) => block.type === 'text') }
      if (Object.isFrozen(message)) this.messagePrints.set(message, print)
    }
    return print
  }
}

function segmentOf(text: string): PromptSegment {
  return { hash: hashText(text), chars: text.length }
}

/** Which part of `print`'s prompt segment `index` belongs to, or `undefined` past its end. */
export function segmentPart(print: RequestFingerprint, index: number): SegmentPart | undefined {
  if (index < 0 || index >= print.segments.length) return undefined
  if (index < print.tools) return { part: 'tools', index }
  if (print.system && index === print.tools) return { part: 'system' }
  const messages = print.messages
  let low = 0
  let high = messages.length - 1
  while (low < high) {
    const middle = (low + high + 1) >> 1
    if ((messages[middle] as MessageShape).start <= index) low = middle
    else high = middle - 1
  }
  return { part: 'message', index: low, role: (messages[low] as MessageShape).role }
}

/** Characters of `print`'s prompt before segment `index`. */
export function charsBefore(print: RequestFingerprint, index: number): number {
  let chars = 0
  const end = Math.min(index, print.segments.length)
  for (let at = 0; at < end; at++) chars += (print.segments[at] as PromptSegment).chars
  return chars
}
