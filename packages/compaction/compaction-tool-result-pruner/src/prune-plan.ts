import type { ToolResultContent, ToolResultMessage } from '@warmfold/llm'

/**
 * Which over-budget results a pass may touch, by the seq of their `tool/result` event: a
 * predicate or a set of seqs. Omitted means every surface node. A predicate is only asked
 * about surface nodes that are `tool/result` events.
 *
 * This is how a compaction engine keeps C4: when a summary call will replay surface positions
 * `0..k`, it passes only the seqs after `k`, so the replayed region stays byte-identical.
 */
export type PruneFilter = ((seq: number) => boolean) | ReadonlySet<number>

/** One rewrite {@link ToolResultPruner.planSession} would make. Nothing has been written yet. */
export interface PrunePlanEntry {
  /** Seq of the `tool/result` event on the surface now. */
  readonly seq: number
  /** Its surface position (index into `session.surface.nodes`). */
  readonly position: number
  /** The message on the surface now (the event's message, unchanged). */
  readonly original: ToolResultMessage
  /** The pruned content the replacement would carry (head + marker + tail, images kept). */
  readonly content: readonly ToolResultContent[]
  /**
   * The message that would replace `original` (same call id and error flag, `content`): what a
   * request carries in its place once the rewrite landed, byte for byte, so a caller can build
   * that request before landing it (e.g. to write it to the provider's cache ahead of time).
   */
  readonly replacement: ToolResultMessage
  /** `ctx.tokenMeter.estimateMessage(original)`: what the replacement takes off the request. */
  readonly originalTokens: number
  /** `ctx.tokenMeter.estimateMessage` of the would-be replacement: what it puts back. */
  readonly prunedTokens: number
}

/** One rewrite {@link ToolResultPruner.pruneSession} landed. */
export interface PrunedEntry {
  /** Seq of the original `tool/result`, which stays in the log unchanged. */
  readonly seq: number
  /** Seq of the replacing `tool/result` (always `pruneSeq + 1`). */
  readonly replacementSeq: number
  /** Seq of the `compaction/prune` pricing event. */
  readonly pruneSeq: number
  /** The surface position both the original and the replacement occupy. */
  readonly position: number
  readonly originalTokens: number
  readonly prunedTokens: number
}

/** What a {@link ToolResultPruner.pruneSession} pass did. */
export interface PruneResult {
  /** The landed rewrites, in surface order; empty when nothing was over budget. */
  readonly entries: readonly PrunedEntry[]
  /** Sum of `originalTokens - prunedTokens` over `entries` (token meter estimates). */
  readonly savedTokens: number
}

/** Whether `filter` admits `seq`; no filter admits everything. */
export function includesSeq(filter: PruneFilter | undefined, seq: number): boolean {
  if (filter === undefined) return true
  return typeof filter === 'function' ? filter(seq) : filter.has(seq)
}
