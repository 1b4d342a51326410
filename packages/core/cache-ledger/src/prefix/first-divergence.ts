import type { CacheDivergence } from './cache-divergence.ts'
import type { PrefixMatch } from './prefix-index.ts'
import type { MessageShape, RequestFingerprint } from './request-fingerprint.ts'
import { ENVELOPE_FIELDS, charsBefore, segmentPart } from './request-fingerprint.ts'

/** Where a request departs from what it is compared with, and how much of it it keeps. */
export interface Comparison {
  readonly divergence: CacheDivergence
  /** Characters of the request's prompt before the divergence (for `none`: the whole compared prefix). */
  readonly sharedChars: number
  /**
   * For a summary call: why its messages are not a replay plus one instruction, as a phrase
   * ("the trailing instruction was appended to message 12 …"), when that is the reason.
   */
  readonly shape?: string
}

/**
 * Compares `request` with `reference`, segment by segment in prompt order.
 *
 * A conversation request (`replay` false) keeps the reference when it contains every reference
 * segment first (it only appends). A summary call (`replay` true) keeps it when everything before
 * its last message is the reference's prompt, or a prefix of it, or the reference followed by
 * messages appended since (rule C3: the routed messages of the region, byte for byte), and its
 * last message is one user message of text (the instruction), not text appended to a replayed
 * message.
 */
export function compareRequests(
  reference: RequestFingerprint,
  request: RequestFingerprint,
  replay: boolean,
): Comparison {
  for (let field = 0; field < ENVELOPE_FIELDS.length; field++)
    if (reference.envelope[field] !== request.envelope[field])
      return { divergence: { part: 'envelope', field: ENVELOPE_FIELDS[field], charOffset: 0 }, sharedChars: 0 }
  const instruction = replay ? request.messages.at(-1) : undefined
  const limit = instruction ? instruction.start : request.segments.length
  const common = Math.min(limit, reference.segments.length)
  let index = 0
  while (index < common && reference.segments[index]?.hash === request.segments[index]?.hash) index++
  if (index < common)
    return { divergence: divergenceAt(reference, request, index), sharedChars: charsBefore(request, index) }
  if (!instruction) return { divergence: { part: 'none' }, sharedChars: charsBefore(request, index) }
  return replayShape(reference, request, instruction, index)
}

/** Compares with the best-matching earlier request of the family, when the session gives nothing to compare with. */
export function compareWithFamily(request: RequestFingerprint, match: PrefixMatch): Comparison {
  if (!match.known) return { divergence: { part: 'first' }, sharedChars: 0 }
  if (match.segments === request.segments.length || match.extendsEarlier)
    return { divergence: { part: 'none' }, sharedChars: match.chars }
  const where = segmentPart(request, match.segments)
  const divergence: CacheDivergence =
    where?.part === 'message'
      ? { part: 'message', index: where.index, role: where.role, charOffset: match.chars }
      : where?.part === 'tools'
        ? { part: 'tools', index: where.index, charOffset: match.chars }
        : { part: 'system', charOffset: match.chars }
  return { divergence, sharedChars: match.chars }
}

/** The divergence at segment `index`, where both prompts have a segment and they differ. */
function divergenceAt(reference: RequestFingerprint, request: RequestFingerprint, index: number): CacheDivergence {
  const charOffset = charsBefore(request, index)
  const mine = segmentPart(request, index)
  const theirs = segmentPart(reference, index)
  // A tool added, removed or changed shifts everything after it: the tools are what differs.
  if (mine?.part === 'tools') return { part: 'tools', index: mine.index, charOffset }
  if (theirs?.part === 'tools') return { part: 'tools', index: theirs.index, charOffset }
  if (mine?.part === 'system' || theirs?.part === 'system') return { part: 'system', charOffset }
  if (mine?.part === 'message') return { part: 'message', index: mine.index, role: mine.role, charOffset }
  return { part: 'none' }
}

/** A summary call whose replay matched: is its last message a separate instruction? */
function replayShape(
  reference: RequestFingerprint,
  request: RequestFingerprint,
  instruction: MessageShape,
  matched: number,
): Comparison {
  const position = request.messages.length - 1
  const offset = charsBefore(request, instruction.start)
  // The last message breaks the replay from `charOffset` on, for the reason `shape`.
  const breaksAt = (charOffset: number, shape: string): Comparison => ({
    divergence: { part: 'message', index: position, role: instruction.role, charOffset },
    sharedChars: charOffset,
    shape,
  })
  if (!instruction.instruction)
    return breaksAt(
      offset,
      `its last message (message ${position}, ${instruction.role}) is not an instruction: one user message of text`,
    )
  // Text appended to the last replayed user message instead of a message of its own: the
  // replayed message's blocks are followed by the instruction's in the same message.
  const replayed = reference.messages[position]
  if (
    replayed &&
    matched === instruction.start &&
    replayed.start === instruction.start &&
    replayed.role === instruction.role &&
    replayed.blocks < instruction.blocks
  ) {
    let block = 0
    while (
      block < replayed.blocks &&
      reference.segments[replayed.start + block]?.hash === request.segments[instruction.start + block]?.hash
    )
      block++
    if (block === replayed.blocks)
      return breaksAt(
        charsBefore(request, instruction.start + block),
        `the instruction was appended to the replayed message ${position} (${instruction.role}) ` +
          'instead of following it as a message of its own',
      )
  }
  return { divergence: { part: 'none' }, sharedChars: offset }
}
