// `@warmfold/compaction-basic/engine-parts`: the engine's parts a bridge (the AI SDK middleware)
// folds with on its own transport: policy and budget resolution, region selection, the summary
// call's budget ladder and the checkpoint frame; the summary-call loop itself (`runSummaryCalls`,
// driven over the bridge's own transport), the shrink check and the fold auditor. Hosts use the
// main door.
export type { ResolvedBackgroundFold } from './config/background-fold-config.ts'
export { backgroundFoldProblem, resolveBackgroundFold } from './config/background-fold-config.ts'
export type { CompactionBudget } from './config/compaction-budget.ts'
export { resolveBudget } from './config/compaction-budget.ts'
export type { ParsedCompactionConfig, ResolvedPolicy } from './config/compaction-policy.ts'
export { parseCompactionConfig, resolvePolicy } from './config/compaction-policy.ts'
export type { ResolvedFoldAudit } from './config/fold-audit-config.ts'
export type { ResolvedKeepUserMessages } from './config/keep-user-messages.ts'
export { keptUserBudget } from './config/keep-user-messages.ts'
export { foldAuditProblem, resolveFoldAudit } from './config/fold-audit-config.ts'
export { CompactionRefusal } from './compaction-refusal.ts'
export { waitOn } from './engine-clock.ts'
export { frameCheckpoint } from './fold/compaction-instruction.ts'
export { FoldAuditor } from './fold/fold-auditor.ts'
export { assertShrinks } from './fold/fold-checks.ts'
export { pricesWithin, selectRegion } from './fold/select-region.ts'
export type { NextSummaryCall, SummaryAnswer, SummaryCallBudget } from './fold/summary-attempts.ts'
export { classifySummaryAnswer, nextSummaryCall } from './fold/summary-attempts.ts'
export { MIN_SUMMARY_OUTPUT_TOKENS, summaryLimit } from './fold/summary-budget.ts'
export type { SummaryLadderStep, SummaryLoopResult, SummaryTransport } from './fold/summary-loop.ts'
export { runSummaryCalls } from './fold/summary-loop.ts'
export { softThreshold } from './triggers/fold-pace.ts'
