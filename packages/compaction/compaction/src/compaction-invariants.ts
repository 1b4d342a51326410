import type { Context } from '@cordisjs/core'
import type { Message } from '@warmfold/llm'
import type { AppendCandidate, Session } from '@warmfold/session'
import { checkpointCompactionId, isCheckpointMessage } from './checkpoint.ts'
import { compactionAfterId, isCompactionAfterMessage } from './compaction-after.ts'

const INVARIANT_ERROR_BRAND = Symbol.for('warmfold.compaction.invariant-error')

/** A compaction event broke the bracket or adjacency rules; the append was rejected. */
export class CompactionInvariantError extends Error {
  override readonly name = 'CompactionInvariantError'
  readonly [INVARIANT_ERROR_BRAND] = true

  /** Whether `value` is a `CompactionInvariantError` from any copy of this package. */
  static isInstance(value: unknown): value is CompactionInvariantError {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[INVARIANT_ERROR_BRAND] === true
    )
  }
}

interface BracketState {
  /** The open compaction, if any, with the seqs of its summary and checkpoint once logged. */
  open?: { compactionId: string; summarySeq?: number; checkpointSeq?: number; auditSeq?: number }
  /** The previous event, for adjacency checks. */
  previous?: { seq: number; type: string; data: unknown }
  /** Set while a fork's session replays its parent's request (see `checkCompactionEvent`). */
  forkReplay?: true
}

const MESSAGE_EVENTS: ReadonlySet<string> = new Set(['user/message', 'assistant/message', 'tool/result'])
/** The events inside a bracket that name its compaction: the open one. */
const NAMES_OPEN_COMPACTION: ReadonlySet<string> = new Set(['compaction/summary', 'compaction/end', 'compaction/audit'])

/**
 * Checks one candidate event against the compaction rules and returns the state after it.
 * Throws `CompactionInvariantError` naming the rule:
 * - one open compaction per session; exactly one end per start, with the same id;
 * - `compaction/summary` only inside its bracket, once; a successful end needs a summary;
 * - the checkpoint `user/message` replace comes immediately after its `compaction/summary` (same
 *   compaction id), shadows exactly its `shadowedSeqs` and keeps exactly its `carriedSeqs`;
 * - a message a `compaction/after` listener appended is an append inside the bracket of its
 *   compaction, after that compaction's checkpoint;
 * - a `compaction/audit` comes inside the bracket of its compaction, after its checkpoint, at
 *   most once;
 * - the `tool/result` replace comes immediately after its `compaction/prune` and shadows exactly
 *   its `shadowedSeqs`; a `compaction/prune` is always followed by its replacement.
 *
 * A fork's session (`agent.fork`) opens with `agent/fork` at seq 0 and its parent's last request
 * replayed as message appends: up to the first other event, a checkpoint or `compaction/after`
 * message there is the parent's, checked in the parent's log, and is taken as the plain append it
 * now is (the fork's request holds it byte for byte).
 */
export function checkCompactionEvent(state: BracketState, candidate: AppendCandidate): BracketState {
  const { type, seq } = candidate
  const data = candidate.data as Record<string, unknown>
  const previous = state.previous
  const forkReplay =
    (seq === 0 && type === 'agent/fork') ||
    (state.forkReplay === true && MESSAGE_EVENTS.has(type) && candidate.surface?.op === 'append')
  const fail: (rule: string) => never = (rule) => {
    throw new CompactionInvariantError(`compaction invariant: ${type} at seq ${seq} rejected: ${rule}`)
  }
  if (previous?.type === 'compaction/prune') {
    const expected = (previous.data as { shadowedSeqs: number[] }).shadowedSeqs
    if (type !== 'tool/result' || candidate.surface?.op !== 'replace')
      fail(`the compaction/prune at seq ${previous.seq} must be followed immediately by its tool/result replacement`)
    if (!shadowsExactly(candidate, expected, [])) {
      fail(
        `the replacement must shadow exactly the seqs priced by compaction/prune at seq ${previous.seq} ` +
          `(${expected.join(', ')}) and keep none`,
      )
    }
  } else if (type === 'tool/result' && candidate.surface?.op === 'replace') {
    fail('a tool/result replacement must come immediately after its compaction/prune pricing event')
  }
  let open = state.open
  if (open && NAMES_OPEN_COMPACTION.has(type) && open.compactionId !== data.compactionId)
    fail(`it names compaction ${String(data.compactionId)} but ${open.compactionId} is open`)
  switch (type) {
    case 'compaction/start':
      if (open) fail(`compaction ${open.compactionId} is still open; only one compaction may be open per session`)
      open = { compactionId: String(data.compactionId) }
      break
    case 'compaction/summary':
      if (!open) fail('a compaction/summary must be inside a compaction bracket (no compaction is open)')
      if (open.summarySeq !== undefined)
        fail(`compaction ${open.compactionId} already has a summary at seq ${open.summarySeq}`)
      if (!Array.isArray(data.shadowedSeqs) || data.shadowedSeqs.length === 0)
        fail('shadowedSeqs must list at least one seq')
      open = { ...open, summarySeq: seq }
      break
    case 'compaction/end':
      if (!open) fail('there is no open compaction to end')
      if (data.error === undefined && open.summarySeq === undefined)
        fail(`compaction ${open.compactionId} ends without error but never logged a summary`)
      open = undefined
      break
    case 'compaction/audit':
      if (!open) fail('a compaction/audit must be inside the bracket of its compaction (no compaction is open)')
      if (open.checkpointSeq === undefined)
        fail(
          `a compaction/audit must come after the checkpoint of compaction ${open.compactionId}, which is not ` +
            `logged yet`,
        )
      if (open.auditSeq !== undefined)
        fail(`compaction ${open.compactionId} already has an audit at seq ${open.auditSeq}`)
      open = { ...open, auditSeq: seq }
      break
    case 'user/message': {
      const message = data.message as Message
      if (forkReplay) break
      if (isCompactionAfterMessage(message)) {
        const id = compactionAfterId(message)
        if (candidate.surface?.op !== 'append')
          fail('a compaction/after message must be appended, not replace anything')
        if (!open || open.compactionId !== id)
          fail(
            `a compaction/after message must be appended inside the bracket of its compaction ` +
              `${String(id)}${open ? `, but ${open.compactionId} is open` : ', but no compaction is open'}`,
          )
        if (open.checkpointSeq === undefined)
          fail(
            `a compaction/after message must come after the checkpoint of compaction ${open.compactionId}, which ` +
              `is not logged yet`,
          )
        break
      }
      if (!isCheckpointMessage(message)) break
      if (previous?.type !== 'compaction/summary')
        fail('a checkpoint message must come immediately after its compaction/summary')
      if (candidate.surface?.op !== 'replace') fail('a checkpoint message must replace the region it summarizes')
      const summary = previous.data as { compactionId: string; shadowedSeqs: number[]; carriedSeqs?: number[] }
      if (checkpointCompactionId(message) !== summary.compactionId) {
        fail(
          `a checkpoint message must come immediately after its compaction/summary; it names compaction ` +
            `${String(checkpointCompactionId(message))} but the summary at seq ${previous.seq} is for ` +
            `${summary.compactionId}`,
        )
      }
      const expected = summary.shadowedSeqs
      if (!shadowsExactly(candidate, expected, summary.carriedSeqs ?? [])) {
        fail(
          `the checkpoint must shadow exactly the seqs of compaction/summary at seq ${previous.seq} and keep ` +
            `exactly its carriedSeqs`,
        )
      }
      if (open) open = { ...open, checkpointSeq: seq }
      break
    }
  }
  return { open, previous: { seq, type, data }, ...(forkReplay ? { forkReplay } : {}) }
}

/**
 * Whether a replace cites exactly `expected`, keeps exactly `kept` and covers exactly as many
 * surface positions as both together. The log already checked that every shadowed seq is cited,
 * but a replace may cite more seqs than it shadows; the span length closes that gap.
 */
function shadowsExactly(candidate: AppendCandidate, expected: readonly number[], kept: readonly number[]): boolean {
  const surface = candidate.surface
  if (surface?.op !== 'replace') return false
  return (
    surface.end - surface.start + 1 === expected.length + kept.length &&
    sameSeqs(surface.sourceEventSeqs, expected) &&
    sameSeqs(surface.keep ?? [], kept)
  )
}

function sameSeqs(left: readonly number[], right: readonly number[]): boolean {
  return left.length === right.length && left.every((seq, index) => seq === right[index])
}

/**
 * A plugin that validates compaction events as they are appended to every session the store
 * holds (through `session.addValidator`, so a violating append is rejected and the log stays
 * untouched). Mount it in tests and, if you like, in production.
 */
export const CompactionInvariants = {
  name: 'compaction-invariants',
  inject: ['sessions'],
  apply(ctx: Context) {
    ctx.on('session/open', (session: Session) => {
      // A reopened session's history is trusted as stored; only the bracket state is rebuilt.
      let state: BracketState = {}
      for (const event of session.events) {
        try {
          state = checkCompactionEvent(state, event)
        } catch {
          state = { open: state.open, previous: { seq: event.seq, type: event.type, data: event.data } }
        }
      }
      // A later validator may still reject a candidate this one accepted, so its resulting state
      // only counts once the log has grown past its seq.
      let pending: { seq: number; state: BracketState } | undefined
      const remove = session.addValidator((candidate) => {
        if (pending && pending.seq < candidate.seq) state = pending.state
        pending = { seq: candidate.seq, state: checkCompactionEvent(state, candidate) }
      })
      ctx.effect(() => remove)
    })
  },
}
