export type { AfterFoldBehaviour, AfterFoldInput, CallLoop, RepeatedCall } from './after-fold-behaviour.ts'
export { afterFoldBehaviour, DEFAULT_WINDOW_STEPS } from './after-fold-behaviour.ts'
export type { Artifact, ArtifactClass, ArtifactOrigin } from './artifact.ts'
export { ARTIFACT_CLASSES } from './artifact.ts'
export { artifactKey } from './artifact-collector.ts'
export type {
  ArtifactExtraction,
  ExtractArtifactsOptions,
  ToolCallRecord,
  ToolCallResult,
} from './artifact-extraction.ts'
export { ArtifactExtractor, checkpointArtifacts, extractArtifacts } from './artifact-extractor.ts'
export type { ArtifactTrail, ArtifactTrailOptions, TrailSection } from './artifact-trail.ts'
export { buildArtifactTrail, DEFAULT_TRAIL_TOKENS } from './artifact-trail.ts'
export type { AuditFoldInput, ClassRetention, DroppedArtifact, FoldAudit, VanishedArtifact } from './audit-fold.ts'
export { auditFold, DEFAULT_MAX_DROPPED } from './audit-fold.ts'
export type { CheckpointHealth } from './checkpoint-health.ts'
export type { HeldArtifact, HeldArtifacts } from './held-artifacts.ts'
export { heldArtifactList } from './held-artifacts.ts'
export type { LoggedMessage } from './logged-message.ts'
export type { VisibleItem } from './searchable-text.ts'
export type { ToolKind, ToolKinds } from './tool-kind.ts'
