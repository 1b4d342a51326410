import type { Message } from '@warmfold/llm'
import type { Session, SessionEvent } from '@warmfold/session'
import { isCheckpointMessage } from './checkpoint.ts'

declare module '@warmfold/session' {
  interface SessionEventMap {
    /**
     * A host pinned surface node `seq` (e.g. the instruction file contents, the task statement):
     * every later fold carries it verbatim right after its checkpoint, in surface order, and the
     * tool-result pruner never rewrites it. Log-only; write it with {@link pinMessage}.
     */
    'compaction/pin': { seq: number }
    /** Ends the pin of `seq`: the next fold may summarize it. Log-only; write it with {@link unpinMessage}. */
    'compaction/unpin': { seq: number }
  }
}

/** A pin target: a surface seq, or a message whose id is on the surface. */
export type PinTarget = number | Pick<Message, 'id'>

interface PinScan {
  scanned: number
  pinned: Set<number>
  view?: ReadonlySet<number>
}

const scans = new WeakMap<Session, PinScan>()

/**
 * The seqs pinned in `session`: every `compaction/pin` not undone by a later `compaction/unpin`.
 * A pinned seq that is no longer on the surface (another plugin shadowed it) pins nothing.
 * Read from the log, so a reopened session has the same pins. O(new events) per call.
 */
export function pinnedSeqs(session: Session): ReadonlySet<number> {
  let scan = scans.get(session)
  if (!scan) scans.set(session, (scan = { scanned: 0, pinned: new Set() }))
  for (; scan.scanned < session.length; scan.scanned++) {
    const event = session.eventAt(scan.scanned)
    if (event?.type === 'compaction/pin') scan.pinned.add(event.data.seq)
    else if (event?.type === 'compaction/unpin') scan.pinned.delete(event.data.seq)
    else continue
    scan.view = undefined
  }
  scan.view ??= new Set(scan.pinned)
  return scan.view
}

/** Whether surface node `seq` of `session` is pinned. */
export function isPinned(session: Session, seq: number): boolean {
  return pinnedSeqs(session).has(seq)
}

/**
 * Pins a surface message of `session`: from now on every fold carries it verbatim right after
 * the checkpoint (pinned and kept messages in their original order, then the retained tail), and
 * the pruner never rewrites it. A pinned tool result or an assistant message with tool calls is
 * carried with the rest of its tool exchange (the calls and all their results), so no result ever
 * loses its call. Appends `compaction/pin { seq }`.
 *
 * @param target the seq of a surface node, or a message (by `id`) that is on the surface now.
 * @returns the logged event, or `undefined` when `target` was already pinned.
 * @throws RangeError when the target is not on the surface or is a compaction checkpoint (a
 *   checkpoint is re-summarized by the next fold; pin what it should keep instead).
 */
export function pinMessage(session: Session, target: PinTarget): SessionEvent<'compaction/pin'> | undefined {
  const seq = surfaceSeqOf(session, target, 'pinMessage')
  const message = session.deriveEventMessage(session.eventAt(seq)!) as Message
  if (isCheckpointMessage(message)) {
    throw new RangeError(
      `pinMessage: seq ${seq} of session ${session.id} is a compaction checkpoint, which the next fold summarizes ` +
        `again; pin the messages it should keep instead`,
    )
  }
  if (isPinned(session, seq)) return undefined
  return session.append('compaction/pin', { seq })
}

/**
 * Ends the pin of `target`; the next fold may summarize it. Appends `compaction/unpin { seq }`.
 * @returns the logged event, or `undefined` when `target` was not pinned.
 * @throws RangeError when `target` is neither a seq of the log nor a message on the surface.
 */
export function unpinMessage(session: Session, target: PinTarget): SessionEvent<'compaction/unpin'> | undefined {
  const seq = typeof target === 'number' ? target : surfaceSeqOf(session, target, 'unpinMessage')
  if (!Number.isInteger(seq) || seq < 0 || seq >= session.length) {
    throw new RangeError(
      `unpinMessage: seq ${String(seq)} is not in session ${session.id}, which has ${session.length} events`,
    )
  }
  if (!isPinned(session, seq)) return undefined
  return session.append('compaction/unpin', { seq })
}

function surfaceSeqOf(session: Session, target: PinTarget, caller: string): number {
  const nodes = session.surface.nodes
  if (typeof target === 'number') {
    if (!nodes.includes(target)) {
      throw new RangeError(
        `${caller}: seq ${String(target)} is not a surface node of session ${session.id} (only messages of the ` +
          `current surface can be pinned)`,
      )
    }
    return target
  }
  const id = (target as { id?: unknown } | null)?.id
  if (typeof id !== 'string')
    throw new RangeError(
      `${caller}: the target must be a surface seq or a message with a string id, got ${String(target)}`,
    )
  const messages = session.deriveMessages()
  const position = messages.findIndex((message) => message.id === id)
  if (position === -1)
    throw new RangeError(
      `${caller}: no message with id ${JSON.stringify(id)} is on the surface of session ${session.id}`,
    )
  return nodes[position] as number
}
