import type { CanonicalRequest } from './canonical-request.ts'
import { canonicalWireJson } from './canonical-json.ts'
import type { SegmentInterner } from './segment-interner.ts'

/** Which part of a prompt a segment belongs to. */
export type PromptPart = 'tools' | 'system' | 'message'

/**
 * One segment of a rendered prompt, in provider render order: a tool definition, the system
 * prompt, or a message (one content block of a message, for the simulator's layouts).
 */
export interface PromptSegment {
  readonly part: PromptPart
  /**
   * Index of the tool, or of the message: its position in the request's `messages`, or for a
   * wire layout ({@link layoutOf}) its index in the body's own list (`messages`, `input`, `contents`).
   */
  readonly index: number
  /** Index of the content block inside its message (simulator layouts, one segment per block). */
  readonly blockIndex?: number
  /** The message's role (wire layouts; for Responses items without one: their `type`). */
  readonly role?: string
  /** The canonical text of the segment. */
  readonly text: string
  /** Interned id: equal ids ⇔ equal text (within one {@link SegmentInterner}). */
  readonly id: number
}

/** A request's prompt as segments, in order: tools, system, then the messages. */
export interface PromptLayout {
  readonly segments: readonly PromptSegment[]
  /** Characters before each segment; `offsets[segments.length]` is the prompt length. */
  readonly offsets: readonly number[]
  /** Index of the first message segment (tools and system come before it). */
  readonly headSegments: number
}

/** `segments` with their running offsets. */
export function layoutFrom(segments: readonly PromptSegment[], headSegments: number): PromptLayout {
  const offsets = [0]
  for (const segment of segments) offsets.push((offsets.at(-1) as number) + segment.text.length)
  return { segments, offsets, headSegments }
}

/**
 * Serializes a canonical wire request into interned segments: `{"tool":…}` per tool,
 * `{"system":…}`, then each message (with its role), in {@link canonicalWireJson}.
 */
export function layoutOf(request: CanonicalRequest, interner: SegmentInterner): PromptLayout {
  const segments: PromptSegment[] = []
  const push = (text: string, part: PromptPart, index: number, role?: string) =>
    segments.push({ part, index, ...(role === undefined ? {} : { role }), ...interner.intern(text) })
  request.tools.forEach((tool, index) => push(canonicalWireJson({ tool }), 'tools', index))
  if (request.system !== undefined) push(canonicalWireJson({ system: request.system }), 'system', 0)
  const headSegments = segments.length
  for (const message of request.messages) push(canonicalWireJson(message.value), 'message', message.index, message.role)
  return layoutFrom(segments, headSegments)
}

/** Length of the common prefix of two strings, in UTF-16 code units. */
export function commonPrefixLength(left: string, right: string): number {
  const limit = Math.min(left.length, right.length)
  let index = 0
  while (index < limit && left.charCodeAt(index) === right.charCodeAt(index)) index++
  return index
}
