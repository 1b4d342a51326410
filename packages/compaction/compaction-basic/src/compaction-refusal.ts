import type { ManualCompactionErrorCode } from '@warmfold/compaction'

/**
 * A compaction that ended without a checkpoint for an expected reason. The message is what
 * `compaction/end.error` records; `code` maps to `ManualCompactionError` codes.
 */
export class CompactionRefusal extends Error {
  override readonly name = 'CompactionRefusal'

  /** The `LlmError` code when the summary call itself failed (e.g. `CONTEXT_WINDOW_EXCEEDED`). */
  readonly llmCode?: string

  constructor(
    readonly code: ManualCompactionErrorCode,
    message: string,
    options?: { cause?: unknown; llmCode?: string },
  ) {
    super(message, options)
    this.llmCode = options?.llmCode
  }
}
