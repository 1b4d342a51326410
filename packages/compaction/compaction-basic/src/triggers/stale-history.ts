import type { Session } from '@warmfold/session'

/** Stale discards in a row after which a session's background folds pause. */
export const STALE_STREAK_LIMIT = 2

/** The longest pause, in folds on the turn's path. */
export const MAX_STALE_PAUSE = 16

const histories = new WeakMap<Session, StaleHistory>()

/**
 * What one session's stale discards taught, in this process (the forecast guards against the stale
 * folds it can predict; these are the ones it could not):
 *
 * - **the miss**: how far the request after a stale fold's swap came out above the forecast made when
 *   the fold started (a tool result far larger than the session's pace, a longer summary). Later
 *   forecasts add the largest miss to the expected growth, so a fold that would go stale the same way
 *   is not started;
 * - **the pause**: after {@link STALE_STREAK_LIMIT} stale discards in a row (no background fold landed
 *   between them) the session folds on the turn's path only, for 1 fold, then 2, 4, ... up to
 *   {@link MAX_STALE_PAUSE} as the streak grows. A background fold that lands ends the streak and the pause.
 */
export class StaleHistory {
  private streak = 0
  private miss = 0
  private paused = 0
  private readonly forecasts = new WeakMap<object, number>()

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

  /** Folds on the turn's path left before the session's next background fold (0: not paused). */
  get pausedFolds(): number {
    return this.paused
  }

  /** `fold` started with the forecast `projectedTokens` for the request right after its swap. */
  started(fold: object, projectedTokens: number): void {
    this.forecasts.set(fold, projectedTokens)
  }

  /** `fold` was discarded as stale at its swap: the request after it would have been `projectedTokens`. */
  stale(fold: object, projectedTokens: number): void {
    const forecast = this.forecasts.get(fold)
    if (forecast !== undefined) this.miss = Math.max(this.miss, projectedTokens - forecast)
    this.streak++
    if (this.streak >= STALE_STREAK_LIMIT)
      this.paused = Math.min(MAX_STALE_PAUSE, 2 ** (this.streak - STALE_STREAK_LIMIT))
  }

  /** A fold of the session committed: a background one ends the streak, one on the turn's path shortens the pause. */
  landed(mode: 'background' | 'sync'): void {
    if (mode === 'background') {
      this.streak = 0
      this.paused = 0
    } else if (this.paused > 0) this.paused--
  }
}
