export {
  CHECKPOINT_PLUGIN,
  checkpointCompactionId,
  checkpointSource,
  isCheckpointMessage,
  isCheckpointSource,
} from './checkpoint.ts'
export type { CompactionAfterContext } from './compaction-after.ts'
export {
  COMPACTION_AFTER_PLUGIN,
  compactionAfterId,
  compactionAfterSource,
  isCompactionAfterMessage,
} from './compaction-after.ts'
export type { AuditClassRetention, AuditDroppedItem, AuditTrail, CompactionAuditData } from './compaction-audit.ts'
export type { CompactionAgent, ManualCompactionAgent } from './compaction-agent.ts'
export { CompactionEngine } from './compaction-engine.ts'
export type {
  CompactionResult,
  CompactionTrigger,
  DiscardedFold,
  FoldTiming,
  PruneDecisionData,
  ShadowedRange,
  SummaryAttempt,
  SummaryAttemptReason,
} from './compaction-events.ts'
export { COMPACTION_EVENT_TYPES } from './compaction-events.ts'
export { checkCompactionEvent, CompactionInvariantError, CompactionInvariants } from './compaction-invariants.ts'
export type { CompactionTriggerPolicy, TriggeredEngine } from './compaction-triggers.ts'
export { installCompactionTriggers } from './compaction-triggers.ts'
export type { ManualCompactionErrorCode } from './manual-compaction-error.ts'
export { ManualCompactionError } from './manual-compaction-error.ts'
export type { PinTarget } from './pin-message.ts'
export { isPinned, pinMessage, pinnedSeqs, unpinMessage } from './pin-message.ts'
export { balancedCuts, isBalancedCut, toolPairingBalancedAfter, toolPairingBalancedBefore } from './tool-pairing.ts'
export { CompactionEngine as default } from './compaction-engine.ts'
