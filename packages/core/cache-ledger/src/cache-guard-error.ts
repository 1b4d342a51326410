import type { CacheDivergence } from './prefix/index.ts'

const GUARD_ERROR_BRAND = Symbol.for('warmfold.cache-ledger.guard-error')

/**
 * Thrown from the `llm/stream` hook when the summary guard runs with `guard: 'refuse'` and a
 * summary call is not a warm replay of the session's last conversation request: the call is
 * never sent. `@warmfold/compaction-basic` turns it into a refused compaction with `reason`.
 */
export class CacheGuardError extends Error {
  override readonly name = 'CacheGuardError'
  readonly [GUARD_ERROR_BRAND] = true

  constructor(
    /** The session whose summary call was refused. */
    readonly sessionId: string,
    /** One sentence naming what differs (the `cache/guard` event's `reason`). */
    readonly reason: string,
    /** Where the summary call departs from the last conversation request. */
    readonly divergence: CacheDivergence,
  ) {
    super(`the cache guard refused the summary call of session ${sessionId}: ${reason}`)
  }

  /** Whether `value` is a `CacheGuardError` from any copy of this package (never use `instanceof`). */
  static isInstance(value: unknown): value is CacheGuardError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[GUARD_ERROR_BRAND] === true
  }
}
