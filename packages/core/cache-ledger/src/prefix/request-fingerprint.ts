import type { GenerateOptions, MessageRole } from '@warmfold/llm'
import type { CanonicalDigest } from './canonical-digest.ts'
import { canonicalDigest, hashText } from './canonical-digest.ts'
import { RenderOrder } from './render-order.ts'

/** The settings that decide a request's cache family, in the order they are compared. */
export const ENVELOPE_FIELDS = ['provider', 'model', 'reasoningEffort', 'temperature', 'stop'] as const

export type EnvelopeField = (typeof ENVELOPE_FIELDS)[number]

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
  /** One digest per segment of the canonical prompt: a tool, the system prompt, or one content block of a message. */
  readonly segments: readonly CanonicalDigest[]
  /** Number of tool segments (they come first). */
  readonly tools: number
  /** Whether the segment after the tools is the system prompt. */
  readonly system: boolean
  readonly messages: readonly MessageShape[]
  /** Characters of the canonical prompt. */
  readonly chars: number
}

/** The part of a prompt a segment belongs to. */
export type SegmentPart =
  | { readonly part: 'tools'; readonly index: number }
  | { readonly part: 'system' }
  | { readonly part: 'message'; readonly index: number; readonly role: MessageRole }

/**
 * Fingerprints requests: each {@link RenderOrder} segment (the {@link PromptRenderer}'s) digested
 * without rendering its text (see {@link canonicalDigest}), its length counting each string
 * character once. A long session costs one hash per new message.
 */
export class Fingerprinter {
  private readonly order = new RenderOrder(canonicalDigest)
  private readonly envelopes = new Map<string, Pick<RequestFingerprint, 'family' | 'envelope'>>()

  /**
   * @param canonicalJson deterministic JSON of prompt data (`canonicalJson` of `@warmfold/llm`), for
   *   the envelope settings; it throws for a value JSON cannot hold (a NaN temperature), and so
   *   does {@link fingerprint}.
   */
  constructor(private readonly canonicalJson: (value: unknown) => string) {}

  fingerprint(request: Pick<GenerateOptions, EnvelopeField | 'system' | 'tools' | 'messages'>): RequestFingerprint {
    const { family, envelope } = this.envelope(request)
    const segments = this.order.toolSegments(request)
    const tools = segments.length
    const systemSegment = this.order.systemSegment(request)
    if (systemSegment) segments.push(systemSegment)
    const messages: MessageShape[] = []
    for (const message of request.messages) {
      const blocks = this.order.messageSegments(message)
      const instruction = message.role === 'user' && message.content.every((block) => block.type === 'text')
      messages.push({ role: message.role, start: segments.length, blocks: blocks.length, instruction })
      for (const segment of blocks) segments.push(segment)
    }
    let chars = 0
    for (const segment of segments) chars += segment.chars
    return { family, envelope, segments, tools, system: !!systemSegment, messages, chars }
  }

  private envelope(request: Pick<GenerateOptions, EnvelopeField>): Pick<RequestFingerprint, 'family' | 'envelope'> {
    // One small JSON key per request; the hashes of each distinct envelope are computed once.
    const key = JSON.stringify(ENVELOPE_FIELDS.map((field) => request[field] ?? null))
    let found = this.envelopes.get(key)
    if (!found) {
      const envelope = ENVELOPE_FIELDS.map((field) => hashText(this.canonicalJson(request[field] ?? null)))
      // A handful of envelopes in practice; the cap only guards against a caller that varies them per request.
      if (this.envelopes.size > 1024) this.envelopes.clear()
      found = { family: envelope.join('.'), envelope }
      this.envelopes.set(key, found)
    }
    return found
  }
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
  for (let at = 0; at < end; at++) chars += (print.segments[at] as CanonicalDigest).chars
  return chars
}
