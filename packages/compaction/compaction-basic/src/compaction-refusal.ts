import type { ManualCompactionErrorCode, SummaryAttempt } from '@warmfold/compaction'

/**
 * A compaction that ended without a checkpoint for an expected reason. The message is what
 * `compaction/end.error` records; `code` maps to `ManualCompactionError` codes.
 */
export class CompactionRefusal extends Error {
  override readonly name = 'CompactionRefusal'

  /** The `LlmError` code when the summary call itself failed (e.g. `CONTEXT_WINDOW_EXCEEDED`). */
  readonly llmCode?: string

  /** The summary calls made before the refusal, in order (their cost goes on `compaction/end.attempts`). */
  readonly attempts?: readonly SummaryAttempt[]

  constructor(
    readonly code: ManualCompactionErrorCode,
    message: string,
    options?: { cause?: unknown; llmCode?: string; attempts?: readonly SummaryAttempt[] },
  ) {
    super(message, options)
    this.llmCode = options?.llmCode
    this.attempts = options?.attempts
  }
}

/** `error` when it is a refusal already, else a `code` refusal whose message is `prefix` + the error's message. */
export function asRefusal(error: unknown, code: ManualCompactionErrorCode, prefix = ''): CompactionRefusal {
  if (error instanceof CompactionRefusal) return error
  return new CompactionRefusal(code, `${prefix}${(error as Error)?.message ?? String(error)}`, { cause: error })
}
