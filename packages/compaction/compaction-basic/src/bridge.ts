// The engine's parts a bridge drives (`@warmfold/compaction-basic/bridge`): a host that keeps its
// own loop folds with the engine's policy, instruction, region selection, summary loop (attempts,
// budget ladder, checks) and audit, never a second copy of them (DESIGN §5.5–5.6).
export { backgroundFoldProblem, resolveBackgroundFold } from './config/background-fold-config.ts'
export type {
  BasicCompactionConfig,
  CompactionBudget,
  CompactionPolicy,
  ResolvedPolicy,
} from './config/compaction-policy.ts'
export { parseCompactionConfig, resolveBudget, resolvePolicy } from './config/compaction-policy.ts'
export type { ArtifactTrailConfig, FoldAuditConfig, ResolvedFoldAudit } from './config/fold-audit-config.ts'
export { foldAuditProblem, resolveFoldAudit } from './config/fold-audit-config.ts'
export { CompactionRefusal } from './compaction-refusal.ts'
export { REAL_TIME_CLOCK, waitOn } from './engine-clock.ts'
export { COMPACTION_INSTRUCTION, frameCheckpoint } from './fold/compaction-instruction.ts'
export { FoldAuditor } from './fold/fold-auditor.ts'
export { assertShrinks } from './fold/fold-checks.ts'
export { pricesWithin, selectRegion } from './fold/select-region.ts'
export type { SummaryCallBudget } from './fold/summary-attempts.ts'
export { MIN_SUMMARY_OUTPUT_TOKENS, summaryLimit } from './fold/summary-budget.ts'
export type { SummaryLadderStep, SummaryLoopResult, SummaryTransport } from './fold/summary-loop.ts'
export { runSummaryCalls } from './fold/summary-loop.ts'
