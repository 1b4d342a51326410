import type { Session } from '@warmfold/session'

/** Per-session engine state that is not in the log. */
export interface SessionCompactionState {
  /** A compaction of this session is running in this engine. */
  busy: boolean
  /** No pressure attempt until the measured total reaches this (irreducible tail back-off). */
  backoffUntilTokens?: number
  /** Retries granted after CONTEXT_WINDOW_EXCEEDED since the agent was last idle or answered. */
  overflowRetries: number
  /** How far the log was scanned for turn and bracket state. */
  scanned: number
  /** The turn that is open at `scanned`, if any. */
  openTurn: number | null
  /** A `compaction/start` without its end at `scanned` (a crash mid-compaction). */
  openCompaction?: { compactionId: string; turn: number | null }
}

const states = new WeakMap<Session, SessionCompactionState>()

/** The engine state of `session`, with the turn/bracket scan brought up to date (O(new events)). */
export function compactionState(session: Session): SessionCompactionState {
  let state = states.get(session)
  if (!state) {
    state = { busy: false, overflowRetries: 0, scanned: 0, openTurn: null }
    states.set(session, state)
  }
  for (; state.scanned < session.length; state.scanned++) {
    const event = session.eventAt(state.scanned)
    if (!event) break
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
      case 'compaction/end':
        state.openCompaction = undefined
        break
    }
  }
  return state
}
