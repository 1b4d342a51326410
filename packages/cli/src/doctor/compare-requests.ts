import type { DoctorChange, DoctorDivergence, RequestApi } from './doctor-report.ts'
import type { PromptLayout } from './prompt-layout.ts'
import { partAt, sharedSegmentChars } from './prompt-layout.ts'

/** What the doctor keeps of a request once it has been read: fingerprints, never the body. */
export interface SeenRequest {
  readonly index: number
  readonly api: RequestApi
  /** api + canonical envelope: requests of one family can share a provider's cache. */
  readonly family: string
  /** Canonical setting name → its canonical JSON. */
  readonly envelope: ReadonlyMap<string, string>
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

/** Every envelope setting whose value differs between `left` and `right` (set on one side only counts), in naming order. */
export function envelopeDifferences(left: ReadonlyMap<string, string>, right: ReadonlyMap<string, string>): string[] {
  const fields = new Set([...left.keys(), ...right.keys()])
  const differing = [...fields].filter((field) => left.get(field) !== right.get(field))
  return differing.toSorted((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * Where `current` first differs from `best` and every part it changed. Parts are compared by
 * segment ids; characters only inside the first differing segment.
 */
export function compareRequests(
  current: SeenRequest,
  best: SeenRequest,
): { divergence: DoctorDivergence; changes: DoctorChange[] } {
  const changes: DoctorChange[] = envelopeDifferences(current.envelope, best.envelope).map(
    (field): DoctorChange => `envelope:${field}`,
  )
  const a = current.layout
  const b = best.layout
  const toolIndex = firstDifference(a.ids.slice(0, a.toolCount), b.ids.slice(0, b.toolCount))
  const toolsDiffer = toolIndex !== undefined
  const systemDiffers = a.hasSystem !== b.hasSystem || (a.hasSystem && a.ids[a.toolCount] !== b.ids[b.toolCount])
  const aMessages = a.ids.slice(a.headSegments)
  const bMessages = b.ids.slice(b.headSegments)
  const messageIndex = firstDifference(aMessages, bMessages) ?? aMessages.length
  // Changed or removed before this request's last message: appending, or a new last message (a
  // trailing instruction after a replayed prefix), keeps the prefix.
  const messagesChanged = messageIndex < aMessages.length - 1 && messageIndex < bMessages.length
  if (toolsDiffer) changes.push('tools')
  if (systemDiffers) changes.push('system')
  if (messagesChanged) changes.push('messages')
  if (current.family !== best.family)
    return {
      divergence: { part: 'envelope', field: envelopeDifferences(current.envelope, best.envelope)[0] ?? 'api' },
      changes,
    }
  const charOffset = sharedChars(a, b)
  if (toolsDiffer) return { divergence: { part: 'tools', toolIndex, charOffset }, changes }
  if (systemDiffers) return { divergence: { part: 'system', charOffset }, changes }
  const message = a.messages[messageIndex]
  if (!message) return { divergence: { part: 'none', charOffset }, changes }
  return { divergence: { part: 'messages', messageIndex: message.index, role: message.role, charOffset }, changes }
}

/** Index of the first position where the lists differ, counting a missing item as a difference; undefined when equal. */
function firstDifference(left: readonly number[], right: readonly number[]): number | undefined {
  const limit = Math.min(left.length, right.length)
  for (let index = 0; index < limit; index++) if (left[index] !== right[index]) return index
  return left.length === right.length ? undefined : limit
}

/** Characters of canonical prompt `a` shares with `b` from the start. */
function sharedChars(a: PromptLayout, b: PromptLayout): number {
  const position = firstDifference(a.ids, b.ids) ?? a.ids.length
  if (position >= a.ids.length || position >= b.ids.length) return a.offsets[position] as number
  return (
    (a.offsets[position] as number) +
    sharedSegmentChars(
      a.texts[position] as string,
      partAt(a, position),
      b.texts[position] as string,
      partAt(b, position),
    )
  )
}
