import type { ContentBlock, FinishReason, TokenUsage } from '@warmfold/llm'

/** A surface-position span `start..end` (inclusive) at the time it was shadowed. */
export interface ShadowedRange {
  readonly start: number
  readonly end: number
}

/**
 * Why a summary call was made: the `first`; the same request again after a `tool-call` answer; a
 * `larger-cap` on the same prompt after an answer that spent its cap; a `narrower-replay` (only the
 * region's messages instead of the whole last request, when that request leaves no room for a
 * larger cap); a `fallback-effort` at a lower effort (a deliberate cache break).
 */
export type SummaryAttemptReason = 'first' | 'tool-call' | 'larger-cap' | 'narrower-replay' | 'fallback-effort'

/** One summary call of a compaction: what it sent that may differ between calls, and how it ended. */
export interface SummaryAttempt {
  readonly reason: SummaryAttemptReason
  /** The output cap the call sent. */
  readonly maxTokens?: number
  /** The reasoning effort the call sent. */
  readonly reasoningEffort?: string
  /** Why the answer stopped; `error` or `aborted` when the call itself failed (then no `usage`). */
  readonly finishReason: FinishReason
  /** Provider usage of this call. */
  readonly usage?: TokenUsage
}

/**
 * What started a compaction. `idle`: the agent went idle under pressure (below the threshold)
 * and the engine folds while the provider's cache is still warm, before its TTL runs out.
 * `background`: the request passed the engine's soft threshold, so it summarized the last sent
 * request beside the conversation, to swap the checkpoint in before the pressure threshold.
 */
export type CompactionTrigger = 'pressure' | 'context-overflow' | 'idle' | 'background'

/**
 * How long a fold kept the conversation waiting, and what it hid. Times are milliseconds on the
 * engine's clock (real time, or a simulator's virtual time).
 */
export interface FoldTiming {
  /** `sync`: the summary call ran on the turn's path; `background`: beside the conversation. */
  readonly mode: 'sync' | 'background'
  /** When the first summary call was sent. */
  readonly startedAt: number
  /** From `startedAt` until the summary was in hand. */
  readonly readyAfterMs: number
  /**
   * Where the fold was when the request first reached the pressure threshold while it ran:
   * `none` (it was swapped in before, or it is a sync fold started there), `pending` (the
   * conversation waited for it) or `ready` (it was in hand and swapped in at once).
   */
  readonly statusAtThreshold: 'none' | 'pending' | 'ready'
  /** What the conversation waited for it: all of `readyAfterMs` for a sync fold. */
  readonly waitedMs: number
  /** `readyAfterMs − waitedMs`: the stall a background fold hid (0 for a sync fold). */
  readonly stallSavedMs: number
  /**
   * Prompt tokens the first request after the swap prefills because they are new after the
   * checkpoint (the checkpoint, carried messages, retained tail): the token meter's estimate.
   * A latency model turns it into the seconds that request takes longer.
   */
  readonly postSwapPrefillTokens: number
}

/** Why a background fold's summary was thrown away instead of swapped in. */
export interface DiscardedFold {
  /**
   * `stale` (the request after the swap would still be at or above the soft threshold: the
   * conversation grew too far past the snapshot), `region-changed` (a rewrite inside the
   * snapshot), `route-changed` (provider, model, envelope, system prompt or tools changed),
   * `closed` (the session was closed), `resumed` (a new agent took the session), `timeout` (the
   * conversation reached the threshold and stopped waiting), `superseded` (a fold on the turn's
   * path had to run first: overflow recovery, a manual compaction), `refused` (the summary failed
   * the checks a sync fold makes), `failed` (the call failed), `unloaded` (the engine was
   * unloaded: its plugin disposed or its context stopped; the call in flight was aborted).
   */
  readonly reason:
    | 'stale'
    | 'region-changed'
    | 'route-changed'
    | 'closed'
    | 'resumed'
    | 'timeout'
    | 'superseded'
    | 'refused'
    | 'failed'
    | 'unloaded'
  /** One sentence with the figures behind the reason. */
  readonly detail: string
}

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
      /** Provider usage of the summary call that wrote `summary`. */
      usage?: TokenUsage
      /**
       * Every summary call of this compaction, in order; the last one wrote `summary`. Each
       * call's usage counts in the compaction's cost, not only `usage`.
       */
      attempts?: SummaryAttempt[]
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
      /**
       * With `error`: the summary calls made before the compaction was refused, in order, so
       * their cost is on the log although no checkpoint was committed.
       */
      attempts?: SummaryAttempt[]
      /** How long the fold kept the conversation waiting (engines that measure it). */
      timing?: FoldTiming
      /** A background fold whose summary was thrown away (with `error`; its calls are on `attempts`). */
      discarded?: DiscardedFold
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
    /**
     * Whether a prune pass that alone would clear the pressure lands (`prune`) or the engine folds
     * instead (`fold`, where the pass rewrites only the retained tail, rule C4), and the figures
     * behind it, in units of one uncached prompt token. Log-only; written before the pass's
     * `compaction/prune` events, if any.
     */
    'compaction/prune-decision': PruneDecisionData
  }
}

/** Payload of `compaction/prune-decision` (see the engine's README for the rule). */
export interface PruneDecisionData {
  /** `prune`: the pass lands everywhere and no summary follows; `fold`: a summary follows instead. */
  readonly action: 'prune' | 'fold'
  /** Tool results the pass would rewrite. */
  readonly results: number
  /** Prompt tokens every later request sends fewer. */
  readonly savedTokens: number
  /**
   * Prompt tokens from the first rewritten result to the end, which the next
   * request prefills again instead of reading.
   */
  readonly rewrittenTokens: number
  /** Requests the pruned history is expected to serve before the next fold (bounded), from `growthTokens`. */
  readonly requestsServed: number
  /** Average tokens a request adds, from the session's recent steps; null when too few steps are logged to tell. */
  readonly growthTokens: number | null
  /** Whether the provider still holds the prefix (the last request is younger than the cache TTL). */
  readonly cacheWarm: boolean
  /** The prices used: cached read and write, per uncached prompt token. */
  readonly cacheRead: number
  readonly cacheWrite: number
  /** savedTokens × requestsServed × cacheRead. */
  readonly saving: number
  /** rewrittenTokens × (cacheWrite − cacheRead) while the cache is warm, else 0. */
  readonly cost: number
  /** The rule's verdict in words. */
  readonly reason: string
}

/** The event types this package adds to the session log. */
export const COMPACTION_EVENT_TYPES = [
  'compaction/start',
  'compaction/summary',
  'compaction/end',
  'compaction/prune',
  'compaction/prune-decision',
  'compaction/failure',
  'compaction/pin',
  'compaction/unpin',
  'compaction/audit',
] as const

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
  /**
   * Seqs the checkpoint carried verbatim after itself (see `compaction/summary`);
   * engines that carry nothing may omit it.
   */
  readonly carriedSeqs?: readonly number[]
  /** Seqs of the messages `compaction/after` listeners appended in the same commit, in order. */
  readonly appendedSeqs?: readonly number[]
}
