import type { ContentBlock, TokenUsage } from '@warmfold/llm'

/** A surface-position span `start..end` (inclusive) at the time it was shadowed. */
export interface ShadowedRange {
  readonly start: number
  readonly end: number
}

/** What started a compaction. */
export type CompactionTrigger = 'pressure' | 'context-overflow'

declare module '@warmfold/session' {
  interface SessionEventMap {
    /**
     * Opens a compaction bracket (the lock). `turn` is the running turn, or `null` for a manual
     * compaction between turns. At most one bracket is open per session.
     */
    'compaction/start': { compactionId: string; turn: number | null; trigger: CompactionTrigger | 'manual' }
    /**
     * The pricing event of a checkpoint. The checkpoint `user/message` that replaces the region
     * must be appended **immediately after** it (adjacency is contractual), inside the bracket.
     * The envelope fields are what the summary call actually sent, so a cold fold can be
     * diagnosed from the log alone.
     */
    'compaction/summary': {
      compactionId: string
      /** The checkpoint text the model wrote (before framing). */
      summary: ContentBlock[]
      /** The run of surface positions the checkpoint replaces (carried nodes included). */
      shadowedRange: ShadowedRange
      /** Every surface seq the checkpoint shadows, in surface order. */
      shadowedSeqs: number[]
      /**
       * Seqs of the run that the checkpoint carries verbatim right after itself (pinned messages
       * with their tool exchanges, kept user messages), in surface order: its replace `keep`s
       * exactly these. Absent when it carries nothing.
       */
      carriedSeqs?: number[]
      /** Token price of the shadowed nodes (token meter estimate). */
      shadowedTokenCount: number
      provider: string
      model: string
      reasoningEffort?: string
      temperature?: number
      stop?: string[]
      maxTokens?: number
      /** Provider usage of the summary call. */
      usage?: TokenUsage
    }
    /**
     * Closes the bracket. `error` says why no checkpoint was committed; without it the
     * checkpoint committed.
     */
    'compaction/end': {
      compactionId: string
      turn: number | null
      error?: string
      /**
       * `true` when the process that opened the bracket ended before logging its end (a crash,
       * a kill, a torn last line) and an engine closed it later, on resume. Without `error` the
       * checkpoint had landed before the process ended: the compaction committed.
       */
      recovered?: boolean
    }
    /**
     * The pricing event of one model-free tool-result rewrite. The content-only `tool/result`
     * replacement must be appended **immediately after** it, shadowing exactly `shadowedSeqs`.
     */
    'compaction/prune': { shadowedRange: ShadowedRange; shadowedSeqs: number[]; shadowedTokenCount: number }
    /**
     * A compaction gave up without a bracket being useful, or backs off: `reason` says why
     * (e.g. the tail alone is above the threshold). Log-only.
     */
    'compaction/failure': { trigger: CompactionTrigger; reason: string; totalTokens: number; thresholdTokens: number }
  }
}

/** The event types this package adds to the session log. */
export const COMPACTION_EVENT_TYPES = ['compaction/start', 'compaction/summary', 'compaction/end', 'compaction/prune', 'compaction/failure', 'compaction/pin', 'compaction/unpin'] as const

/** A committed compaction, as returned by an engine. */
export interface CompactionResult {
  readonly compactionId: string
  /** Seq of `compaction/start`, `compaction/summary`, the checkpoint message and `compaction/end`. */
  readonly startSeq: number
  readonly summarySeq: number
  readonly checkpointSeq: number
  readonly endSeq: number
  readonly summary: readonly ContentBlock[]
  readonly shadowedRange: ShadowedRange
  readonly shadowedSeqs: readonly number[]
  readonly shadowedTokenCount: number
  /** Seqs the checkpoint carried verbatim after itself (see `compaction/summary`); engines that carry nothing may omit it. */
  readonly carriedSeqs?: readonly number[]
  /** Seqs of the messages `compaction/after` listeners appended in the same commit, in order. */
  readonly appendedSeqs?: readonly number[]
}
