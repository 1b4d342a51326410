import type { CompactionTrigger, FoldTiming } from '@warmfold/compaction'
import type { GenerateOptions } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { ResolvedFoldAudit } from '../config/fold-audit-config.ts'
import type { KeepUserMessages } from './fold-carry.ts'
import type { SurfaceRegion } from './select-region.ts'
import type { SummaryCallBudget } from './summary-attempts.ts'

/** One compaction of a selected region. */
export interface TransactionInput {
  readonly session: Session
  readonly region: SurfaceRegion
  readonly trigger: CompactionTrigger | 'manual'
  /** The running turn, or `null` between turns (manual). */
  readonly turn: number | null
  /**
   * `whole-surface`: nothing may change while summarizing (automatic paths run inside a step).
   * `selected-span`: appends and rewrites after the span are tolerated (manual compaction, and a
   * background fold, which the conversation goes on beside).
   */
  readonly stability: 'whole-surface' | 'selected-span'
  readonly signal?: AbortSignal
  /**
   * The summary request, built from the region's messages of the current surface in the same
   * tick (no await between) and sized to its budget (`sizeSummaryRequest`).
   */
  readonly request: GenerateOptions
  /** What the summary calls may do when an answer spends its output cap without a summary. */
  readonly budget: SummaryCallBudget
  /** Keep the newest user-authored messages of the region verbatim after the checkpoint, up to this budget. */
  readonly keepUserMessages?: KeepUserMessages
  /** The audit and the artifact trail (engine config `audit`, `artifactTrail`); without it, neither. */
  readonly foldAudit?: ResolvedFoldAudit
}

/** What a committed fold adds to its `compaction/end`. */
export interface CommitExtras {
  /** How long the fold kept the conversation waiting; computed once the checkpoint landed. */
  readonly timing?: (committed: { readonly checkpointSeq: number }) => FoldTiming
}
