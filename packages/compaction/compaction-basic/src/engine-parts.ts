// `@warmfold/compaction-basic/engine-parts`: the engine's parts a bridge (the AI SDK middleware)
// folds with on its own transport: policy and budget resolution, region selection, the summary
// call's budget ladder and the checkpoint frame. Hosts use the main door.
export type { ResolvedBackgroundFold } from './config/background-fold-config.ts'
export { backgroundFoldProblem, resolveBackgroundFold } from './config/background-fold-config.ts'
export type { CompactionBudget } from './config/compaction-budget.ts'
export { resolveBudget } from './config/compaction-budget.ts'
export type { ParsedCompactionConfig, ResolvedPolicy } from './config/compaction-policy.ts'
export { parseCompactionConfig, resolvePolicy } from './config/compaction-policy.ts'
export { frameCheckpoint } from './fold/compaction-instruction.ts'
export { pricesWithin, selectRegion } from './fold/select-region.ts'
export type { NextSummaryCall, SummaryAnswer, SummaryCallBudget } from './fold/summary-attempts.ts'
export { classifySummaryAnswer, nextSummaryCall } from './fold/summary-attempts.ts'
export { MIN_SUMMARY_OUTPUT_TOKENS, summaryLimit } from './fold/summary-budget.ts'
