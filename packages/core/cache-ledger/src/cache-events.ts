import type { FinishReason } from '@warmfold/llm'
import type { CacheBreakCause, CacheDivergence } from './prefix/index.ts'

/**
 * The data of one `cache/observation` event: one request sent through `ctx.llm` and what the
 * provider reported for it. Kept small because there is one per request (about 270
 * bytes a line in a JSONL session file, 330 with all four token buckets).
 *
 * Token fields are exactly the provider's disjoint buckets; a bucket the provider did not report
 * is **absent** (never guessed as 0). Prompt tokens = `uncached + cached + written`.
 */
export interface CacheObservationData {
  /** The request's purpose (`conversation`, `compaction`, …; `unspecified` when it had none). */
  purpose: string
  provider: string
  model: string
  /** Prompt tokens billed at the full input price (`usage.inputTokens`). */
  uncached?: number
  /** Prompt tokens read from the cache (`usage.cacheReadTokens`). */
  cached?: number
  /** Prompt tokens written to the cache (`usage.cacheWriteTokens`). */
  written?: number
  /** Generated tokens, reasoning included (`usage.outputTokens`). */
  output?: number
  /**
   * Characters of the prompt: the canonical JSON of each tool, the system prompt and each
   * message block, every string character counted once (JSON escapes are not counted).
   */
  chars: number
  /**
   * Characters of the prompt the provider could serve from its cache: the longest prefix, in
   * whole content blocks, shared with an earlier request of the same cache family sent within
   * the TTL.
   */
  expected: number
  divergence: CacheDivergence
  cause: CacheBreakCause
  /** Milliseconds since the cache family's previous request, or null for the family's first. */
  idleMs: number | null
  /** How the call ended: the finish reason, or `error` / `aborted` (then usually without tokens). */
  finish: FinishReason
  /**
   * When the request was sent, in milliseconds on the ledger's clock (`now`). A ledger that
   * opens the session later (a restart) takes the provider's TTL from here. Absent in logs
   * written before it was added.
   */
  at?: number
}

/** The data of one `cache/guard` event: a summary call that is not a warm replay, seen before it was sent. */
export interface CacheGuardData {
  /** `warn`: the call went ahead; `refuse`: it was never sent and the compaction was refused. */
  action: 'warn' | 'refuse'
  provider: string
  model: string
  /** Where the summary call departs from the last conversation request (never `none` or `first`). */
  divergence: CacheDivergence
  /** One sentence naming what differs. */
  reason: string
}

declare module '@warmfold/session' {
  interface SessionEventMap {
    /** One request sent through `ctx.llm` and what the provider reported for it (see {@link CacheObservationData}). */
    'cache/observation': CacheObservationData
    /** A summary call that is not a warm replay of the last conversation request (rules C2/C3). */
    'cache/guard': CacheGuardData
  }
}

/** The event types this package adds to the session log. */
export const CACHE_EVENT_TYPES = ['cache/observation', 'cache/guard'] as const
