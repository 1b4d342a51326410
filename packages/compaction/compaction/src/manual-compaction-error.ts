const MANUAL_COMPACTION_ERROR_BRAND = Symbol.for('warmfold.compaction.manual-error')

/**
 * Why a manual compaction failed:
 * - `busy`: the agent was running a turn or another task;
 * - `cancelled`: the signal aborted it;
 * - `changed`: the surface changed under the selected region while summarizing;
 * - `summary`: the summary call failed or its answer was refused;
 * - `commit`: the checkpoint could not be appended;
 * - `persistence`: the checkpoint was committed but the store could not flush it.
 */
export type ManualCompactionErrorCode = 'busy' | 'cancelled' | 'changed' | 'summary' | 'commit' | 'persistence'

/** A manual compaction failed in an expected way. Recognise it with {@link ManualCompactionError.isInstance}. */
export class ManualCompactionError extends Error {
  override readonly name = 'ManualCompactionError'
  readonly code: ManualCompactionErrorCode
  readonly [MANUAL_COMPACTION_ERROR_BRAND] = true

  constructor(code: ManualCompactionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }

  /** Whether `value` is a `ManualCompactionError` from any copy of this package. */
  static isInstance(value: unknown): value is ManualCompactionError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[MANUAL_COMPACTION_ERROR_BRAND] === true
    )
  }
}
