import type { Session } from '@warmfold/session'

/** Stale discards in a row after which a session's background folds pause. */
export const STALE_STREAK_LIMIT = 2

/** The longest pause, in folds on the turn's path. */
export const MAX_STALE_PAUSE = 16

/** How many `compaction/end` events back {@link stalePause} looks, at most. */
const FOLD_ENDS_READ = 64

const histories = new WeakMap<Session, StaleHistory>()

/**
 * What one session's stale discards taught, in this process (the forecast guards against the stale
 * folds it can predict; these are the ones it could not): how far the request after a stale fold's
 * swap came out above the forecast made when the fold started (a tool result far larger than the
 * session's pace, a longer summary). Later forecasts add the largest miss to the growth they expect,
 * so a fold that would go stale the same way is not started.
 */
export class StaleHistory {
  private miss = 0
  /** The forecast of the fold in flight (one per session at a time): the request right after its swap. */
  private forecast?: number

  /** The history of `session` (one per session, created on first use). */
  static of(session: Session): StaleHistory {
    let history = histories.get(session)
    if (!history) histories.set(session, (history = new StaleHistory()))
    return history
  }

  /** Tokens every forecast of the session adds to the growth it expects before a swap. */
  get missTokens(): number {
    return this.miss
  }

  /** A fold of the session starts with the forecast `projectedTokens` for the request right after its swap. */
  started(projectedTokens: number): void {
    this.forecast = projectedTokens
  }

  /** The session's fold was discarded as stale at its swap: the request after it would have been `projectedTokens`. */
  stale(projectedTokens: number): void {
    if (this.forecast !== undefined) this.miss = Math.max(this.miss, projectedTokens - this.forecast)
    this.forecast = undefined
  }
}

/**
 * Folds on the turn's path `session` still makes before its next background fold: after
 * {@link STALE_STREAK_LIMIT} stale discards in a row (no background fold landed between them), 1, then 2,
 * 4, … up to {@link MAX_STALE_PAUSE} as the streak grows, less the folds on the turn's path committed since
 * the latest of them. Read from the log (its latest {@link FOLD_ENDS_READ} `compaction/end` events), so it
 * holds across a restart.
 */
export function stalePause(session: Session): number {
  const events = session.events
  let streak = 0
  let since = 0
  let read = 0
  for (let index = events.length - 1; index >= 0 && read < FOLD_ENDS_READ; index--) {
    const event = events[index]!
    if (event.type !== 'compaction/end') continue
    read++
    const data = event.data as { error?: unknown; discarded?: { reason: string }; timing?: { mode: string } }
    if (data.discarded?.reason === 'stale') streak++
    else if (data.error !== undefined) continue
    else if (data.timing?.mode === 'background') break
    else if (streak === 0) since++
  }
  if (streak < STALE_STREAK_LIMIT) return 0
  return Math.max(0, Math.min(MAX_STALE_PAUSE, 2 ** (streak - STALE_STREAK_LIMIT)) - since)
}
