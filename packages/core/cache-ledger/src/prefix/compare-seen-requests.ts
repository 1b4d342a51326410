import type { RequestApi } from './canonical-request.ts'
import type { PromptLayout } from './prompt-layout.ts'
import { commonPrefixLength } from './prompt-layout.ts'

/** A part of a request that can differ from an earlier request. */
export type PromptChange = `envelope:${string}` | 'system' | 'tools' | 'messages'

/**
 * Where a request first differs from its best-matching earlier request. The canonical prompt is
 * tools, then system, then messages; `charOffset` counts its characters before the first
 * difference.
 */
export interface PromptDivergence {
  /**
   * `first`: nothing earlier to compare with; `none`: the whole prompt was sent before (same
   * cache family); `envelope`: the best match is in another cache family (`field` is the first
   * prompt-shaping setting that differs, and nothing of the prompt can be reused across
   * families); `tools`, `system`, `messages`: the first differing character is in that part.
   */
  readonly part: 'first' | 'none' | 'envelope' | 'tools' | 'system' | 'messages'
  /** For `envelope`: the canonical name of the setting, e.g. `reasoningEffort`, `model`. */
  readonly field?: string
  /**
   * For `tools`: index of the first differing tool in this request (= the earlier request's tool
   * count when tools were only removed at the end).
   */
  readonly toolIndex?: number
  /** For `messages`: the message's index in the body's own list (`messages`, `input` or `contents`). */
  readonly messageIndex?: number
  /** For `messages`: the message's role (for Responses items without a role: the item's `type`). */
  readonly role?: string
  /** Characters of canonical prompt before the first difference (absent for `first` and `envelope`). */
  readonly charOffset?: number
}

/** What is kept of a wire request once it has been read: its interned layout, never the body. */
export interface SeenRequest {
  readonly index: number
  readonly api: RequestApi
  /** api + canonical envelope: requests of one family can share a provider's cache. */
  readonly family: string
  /** Canonical setting name → its canonical JSON. */
  readonly envelope: ReadonlyMap<string, string>
  /** The request's wire layout ({@link layoutOf}). */
  readonly layout: PromptLayout
  readonly t?: number
}

/** The order envelope differences are named in: the settings that most often split a family first. */
const ENVELOPE_ORDER = [
  'model',
  'reasoningEffort',
  'thinking',
  'temperature',
  'topP',
  'topK',
  'stop',
  'toolChoice',
  'parallelToolCalls',
  'responseFormat',
  'promptCacheKey',
  'anthropicBeta',
]

function rank(field: string): number {
  const position = ENVELOPE_ORDER.indexOf(field)
  return position === -1 ? ENVELOPE_ORDER.length : position
}

/**
 * Every envelope setting whose value differs between `left` and `right` (set on one side only
 * counts), in naming order.
 */
function envelopeDifferences(left: ReadonlyMap<string, string>, right: ReadonlyMap<string, string>): string[] {
  const fields = new Set([...left.keys(), ...right.keys()])
  const differing = [...fields].filter((field) => left.get(field) !== right.get(field))
  return differing.toSorted((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * Where `current` first differs from `best` and every part it changed. Parts are compared by
 * segment ids; characters only inside the first differing segment.
 */
export function compareSeenRequests(
  current: SeenRequest,
  best: SeenRequest,
): { divergence: PromptDivergence; changes: PromptChange[] } {
  const fields = envelopeDifferences(current.envelope, best.envelope)
  const changes: PromptChange[] = fields.map((field): PromptChange => `envelope:${field}`)
  const a = partIds(current.layout)
  const b = partIds(best.layout)
  const toolIndex = firstDifference(a.tools, b.tools)
  const systemDiffers = firstDifference(a.system, b.system) !== undefined
  const messageIndex = firstDifference(a.messages, b.messages) ?? a.messages.length
  // Changed or removed before this request's last message: appending, or a new last message (a
  // trailing instruction after a replayed prefix), keeps the prefix.
  const messagesChanged = messageIndex < a.messages.length - 1 && messageIndex < b.messages.length
  if (toolIndex !== undefined) changes.push('tools')
  if (systemDiffers) changes.push('system')
  if (messagesChanged) changes.push('messages')
  if (current.family !== best.family) return { divergence: { part: 'envelope', field: fields[0] ?? 'api' }, changes }
  const charOffset = sharedChars(current.layout, best.layout)
  if (toolIndex !== undefined) return { divergence: { part: 'tools', toolIndex, charOffset }, changes }
  if (systemDiffers) return { divergence: { part: 'system', charOffset }, changes }
  const message = current.layout.segments[current.layout.headSegments + messageIndex]
  if (!message) return { divergence: { part: 'none', charOffset }, changes }
  const divergence: PromptDivergence = {
    part: 'messages',
    messageIndex: message.index,
    role: message.role as string,
    charOffset,
  }
  return { divergence, changes }
}

/** The segment ids of `layout`'s tools, system prompt (none or one) and messages. */
function partIds(layout: PromptLayout): { tools: number[]; system: number[]; messages: number[] } {
  const ids = layout.segments.map((segment) => segment.id)
  let tools = 0
  while (tools < layout.headSegments && layout.segments[tools]?.part === 'tools') tools++
  return {
    tools: ids.slice(0, tools),
    system: ids.slice(tools, layout.headSegments),
    messages: ids.slice(layout.headSegments),
  }
}

/**
 * Index of the first position where the lists differ, counting a missing item as a difference;
 * undefined when equal.
 */
function firstDifference(left: readonly number[], right: readonly number[]): number | undefined {
  const limit = Math.min(left.length, right.length)
  for (let index = 0; index < limit; index++) if (left[index] !== right[index]) return index
  return left.length === right.length ? undefined : limit
}

/**
 * Characters of canonical prompt `a` shares with `b` from the start: whole segments, then the
 * first differing one's shared start when both are of the same part (a tool and a system prompt
 * both open with `{"` in canonical JSON, which says nothing about the prompt).
 */
function sharedChars(a: PromptLayout, b: PromptLayout): number {
  let position = 0
  while (position < a.segments.length && a.segments[position]?.id === b.segments[position]?.id) position++
  const left = a.segments[position]
  const right = b.segments[position]
  const partial = left && right && left.part === right.part ? commonPrefixLength(left.text, right.text) : 0
  return (a.offsets[position] as number) + partial
}
