import type { ManualCompactionErrorCode } from '@warmfold/compaction'

/**
 * A compaction that ended without a checkpoint for an expected reason. The message is what
 * `compaction/end.error` records; `code` maps to `ManualCompactionError` codes.
 */
export class CompactionRefusal extends Error {
  override readonly name = 'CompactionRefusal'

  constructor(
    readonly code: ManualCompactionErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
