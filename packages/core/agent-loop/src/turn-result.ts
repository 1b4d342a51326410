/**
 * Why a turn ended. `interrupted`: the process that ran the turn ended (crash, kill, stop)
 * before the turn did; the `turn/end` was logged when the session was resumed.
 */
export type TurnEndReason = 'stop' | 'max-steps' | 'max-tokens' | 'aborted' | 'error' | 'empty-reply' | 'interrupted'

/**
 * What became of one `followup(message)`: the `turn/end` its turn logged, or `unsent` when the
 * message never started a turn (removed by `abort()`, or handed back on a `LOG_FAILED` error's
 * `unsent` because the log refused it).
 */
export interface TurnResult {
  /** The turn the message started; absent for `unsent`. */
  readonly turn?: number
  /** Why the turn ended, as on `turn/end`; `unsent` when it never started. */
  readonly reason: TurnEndReason | 'unsent'
  /** Steps (requests) the turn started; 0 for `unsent`. */
  readonly steps: number
  /**
   * The failure's code, as on `turn/end`: an `LlmError` code (`AUTH`, `RATE_LIMITED`, …),
   * `SERVICE_MISSING`, a session code, `UNEXPECTED`; `LOG_FAILED` or `ABORTED` for `unsent`.
   */
  readonly errorCode?: string
  /** What went wrong, in words (as on `turn/end`). */
  readonly error?: string
  /** The thrown value behind `errorCode`, when there was one (never logged). */
  readonly cause?: unknown
}
