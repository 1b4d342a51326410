import { checkpointCompactionId, isCheckpointMessage } from '@warmfold/compaction'
import type { Session } from '@warmfold/session'
import type { BackgroundFold } from './fold/background-fold.ts'

/** A compaction bracket that is open at the scanned position. */
export interface OpenCompaction {
  readonly compactionId: string
  readonly turn: number | null
  /** Seq of its `compaction/summary`, once logged. */
  summarySeq?: number
  /** Seq of its checkpoint `user/message` (the replace), once logged: the compaction committed. */
  checkpointSeq?: number
}

/** Where a failed pressure attempt left the session; no new attempt until this changes. */
export interface PressureBackoff {
  /** The turn the attempt ran in (`null` between turns). */
  readonly turn: number | null
  /** `surface.replaceGeneration` after the attempt: a later replace means the surface shrank. */
  readonly replaceGeneration: number
}

/** Per-session engine state that is not in the log. */
export interface SessionCompactionState {
  /** A compaction of this session is running in this engine. */
  busy: boolean
  /** Set by a failed pressure attempt: the next one waits for a new user turn or a shrink. */
  backoff?: PressureBackoff
  /** How far the log was scanned for turn and bracket state. */
  scanned: number
  /** The turn that is open at `scanned`, if any. */
  openTurn: number | null
  /** A `compaction/start` without its end at `scanned` (a crash mid-compaction). */
  openCompaction?: OpenCompaction
  /** When this process last built a conversation request of the session, on the engine's clock (the provider's TTL runs from it). */
  lastRequestAt?: number
  /**
   * Set when a background fold's call failed or its summary was refused: no new background fold
   * until a new user turn or a shrink (the pressure path still folds at the threshold).
   */
  backgroundBackoff?: PressureBackoff
  /** The background fold of this session in this process, while its bracket is open. */
  background?: BackgroundFold
}

const states = new WeakMap<Session, SessionCompactionState>()

/** The engine state of `session`, with the turn/bracket scan brought up to date (O(new events)). */
export function compactionState(session: Session): SessionCompactionState {
  let state = states.get(session)
  if (!state) {
    state = { busy: false, scanned: 0, openTurn: null }
    states.set(session, state)
  }
  for (; state.scanned < session.length; state.scanned++) {
    const event = session.eventAt(state.scanned)
    if (!event) break
    const open = state.openCompaction
    switch (event.type) {
      case 'turn/start':
        state.openTurn = event.data.turn
        break
      case 'turn/end':
        state.openTurn = null
        break
      case 'compaction/start':
        state.openCompaction = { compactionId: event.data.compactionId, turn: event.data.turn }
        break
      case 'compaction/summary':
        if (open?.compactionId === event.data.compactionId) open.summarySeq = event.seq
        break
      case 'user/message':
        if (
          open &&
          isCheckpointMessage(event.data.message) &&
          checkpointCompactionId(event.data.message) === open.compactionId
        )
          open.checkpointSeq = event.seq
        break
      case 'compaction/end':
        state.openCompaction = undefined
        break
    }
  }
  return state
}

/**
 * Whether the back-off of a failed pressure attempt still holds: it does for the rest of that
 * user turn, unless the surface shrank since (a checkpoint or prune landed, e.g. by overflow
 * recovery). So a tail that cannot be reduced costs at most one failed attempt per user turn.
 */
export function backoffHolds(
  state: SessionCompactionState,
  session: Session,
  backoff: PressureBackoff | undefined = state.backoff,
): boolean {
  return (
    backoff !== undefined &&
    backoff.turn === state.openTurn &&
    backoff.replaceGeneration === session.surface.replaceGeneration
  )
}
