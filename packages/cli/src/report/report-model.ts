import type { Cost, PriceProfile } from '@warmfold/prefix-cache-testkit'

/**
 * A request's prompt and output tokens, in disjoint buckets: `cached` (read from the cache),
 * `written` (not read, stored in the cache), `uncached` (neither); `prompt` is their sum.
 * `null` where the log has no number for it.
 */
export interface RequestTokens {
  readonly prompt: number | null
  readonly cached: number | null
  readonly written: number | null
  readonly uncached: number | null
  readonly output: number | null
}

/** Why a request's prompt was not read from the cache as far as it could have been. */
export interface RequestBreak {
  /** One word: `fold`, `prune`, `envelope`, `tools`, `expired`, `provider`, `unknown`, … */
  readonly cause: string
  /** One or two sentences: where the prompt diverged and what caused it. */
  readonly explanation: string
}

/** One request the session sent, as the log tells it. */
export interface ReportRequest {
  /** Position among the session's requests, from 1. */
  readonly number: number
  /** The line of the log that reports it (1-based). */
  readonly line: number
  /** `conversation`, `compaction`, or a host's own purpose. */
  readonly purpose: string
  /** `provider/model`, or null when the log does not say. */
  readonly route: string | null
  readonly tokens: RequestTokens
  /**
   * The numbers the request is drawn, summed and priced with: `tokens` with a bucket the log
   * lacks as 0 (uncached as the rest of a known prompt), or null when the log has none of them.
   */
  readonly billed: BilledRequest | null
  /** A cache break, or null when nothing broke (or nothing is known about it). */
  readonly break: RequestBreak | null
  /** What the log says about the request's cache use beyond the numbers (divergence, expected prefix). */
  readonly detail: string
}

/** Disjoint token buckets of a request and its cost. */
export interface BilledRequest {
  readonly cached: number
  readonly written: number
  readonly uncached: number
  readonly output: number
  /** In input-token units (1 = one uncached prompt token). */
  readonly cost: number
}

/** A request as one source of the log reports it, before it is numbered and priced. */
export type ObservedRequest = Omit<ReportRequest, 'number' | 'billed'>

/** A rewrite of the history logged between two requests. */
export interface ReportMarker {
  /** `fold`: a checkpoint replaced old history; `prune`: tool results were shortened. */
  readonly kind: 'fold' | 'prune'
  /** The number of requests sent before it (0: before the first). */
  readonly afterRequest: number
  /** The first log line of the rewrite. */
  readonly line: number
  /** Rewrites merged into this marker (consecutive prunes between the same two requests merge). */
  readonly count: number
  /** Messages the rewrites replaced. */
  readonly messages: number
  /** The token meter's estimate of what the rewrites replaced. */
  readonly tokens: number
}

/**
 * Something logged between two requests, where the log has it: its (first) line and the number of requests sent
 * before it (a fold's timing: before its bracket closed; a fork: before it started).
 */
interface Logged {
  readonly line: number
  readonly afterRequest: number
}

/** A summary call the summary guard found not to be a warm replay of the conversation. */
export interface ReportGuard extends Logged {
  /** `warn`: the call went ahead; `refuse`: the compaction was refused. */
  readonly action: string
  /** `provider/model` of the summary call. */
  readonly route: string
  /** What differs, as the guard said it. */
  readonly text: string
}

/**
 * Why a prune pass that alone would have relieved the pressure landed or waited for a fold
 * (`compaction/prune-decision`).
 */
export interface ReportPruneDecision extends Logged {
  /** `prune`: the pass landed; `fold`: a summary was made instead. */
  readonly action: string
  /** The figures and the verdict in one sentence. */
  readonly text: string
}

/** How long a fold took and what the conversation waited for it (`compaction/end` `timing`). */
export interface ReportFoldTiming extends Logged {
  readonly compactionId: string
  /** `sync`: on the turn's path; `background`: beside the conversation. */
  readonly mode: 'sync' | 'background'
  /** Where the fold was when the request first reached the pressure threshold. */
  readonly statusAtThreshold: 'none' | 'pending' | 'ready'
  /**
   * Whether the summary call answered: `in-hand` (committed, or thrown away once it had answered: stale,
   * superseded), `aborted` (the discard aborted the call in flight), `failed` (the call failed or was refused).
   */
  readonly summary: 'in-hand' | 'aborted' | 'failed'
  /** Milliseconds from the first summary call until the summary was in hand (or the call was aborted or failed). */
  readonly readyAfterMs: number
  /** Milliseconds the conversation waited for it. */
  readonly waitedMs: number
  /** readyAfterMs − waitedMs for a background fold. */
  readonly stallSavedMs: number
  /** The token meter's estimate of what the first request after the swap prefills new. */
  readonly postSwapPrefillTokens: number
  /** Why a background fold's summary was thrown away; null when it was swapped in. */
  readonly discarded: { readonly reason: string; readonly detail: string } | null
}

/** One compaction bracket of a fold point: the fold that committed, or one thrown away before it. */
export interface ReportFoldAttempt {
  readonly compactionId: string
  /** The line of its `compaction/start`. */
  readonly line: number
  /** What started it: `pressure`, `background`, `idle`, `context-overflow`, `manual`. */
  readonly trigger: string
  /** `sync` or `background` from its timing; null when the engine logs none. */
  readonly mode: 'sync' | 'background' | null
  /** `open`: the log ends inside the bracket. */
  readonly outcome: 'committed' | 'discarded' | 'failed' | 'open'
  /** Why nothing was committed (`reason: detail` of a discard, or the error); null otherwise. */
  readonly reason: string | null
  /** Its summary calls, and what they cost in input-token units. */
  readonly summaryCalls: number
  readonly cost: number
  /** What the conversation waited for it (ms); null without a timing. */
  readonly waitedMs: number | null
}

/**
 * One fold point: the attempts thrown away there and the fold that committed (or, at the end of
 * the log, only attempts), with what it cost and made the conversation wait, and what it dropped.
 */
export interface ReportFold extends Logged {
  /** Whether a checkpoint landed (the last attempt). */
  readonly committed: boolean
  readonly attempts: readonly ReportFoldAttempt[]
  readonly summaryCalls: number
  /** Every attempt's summary calls, in input-token units. */
  readonly summaryCost: number
  /**
   * The first conversation request after the checkpoint (prewarm requests before it included): it
   * prefills the checkpoint and the retained tail again. Null without a checkpoint or a request after it.
   */
  readonly afterSwap: { readonly request: number; readonly cost: number } | null
  /** summaryCost + afterSwap.cost, in input-token units, and in dollars (null without a dollar rate). */
  readonly cost: number
  readonly costUsd: number | null
  /** Every attempt's wait added up (ms); null when none has a timing. */
  readonly waitedMs: number | null
  /** What the checkpoint replaced: messages, and the token meter's estimate of their tokens. */
  readonly folded: { readonly messages: number; readonly tokens: number } | null
  /** The fold audit's dropped artifacts: how many, and the first few (`class text`); null without an audit. */
  readonly dropped: { readonly total: number; readonly items: readonly string[] } | null
}

/** The fold rows added up, and the attempts thrown away (discarded or failed) on their own. */
export interface ReportFoldTotals {
  /** Fold points whose checkpoint landed. */
  readonly folds: number
  readonly cost: number
  readonly costUsd: number | null
  readonly waitedMs: number | null
  readonly thrownAway: {
    readonly attempts: number
    readonly cost: number
    readonly costUsd: number | null
    readonly waitedMs: number | null
  }
}

/** A committed fold's `compaction/audit`, and what the agent did after the fold. */
export interface ReportFoldAudit extends Logged {
  readonly compactionId: string
  /** Per artifact class the folded region held: how many, and how many the model still reads after the fold. */
  readonly classes: ReadonlyArray<{ readonly class: string; readonly seen: number; readonly kept: number }>
  /** The first dropped items, ranked as the audit ranks them. */
  readonly dropped: ReadonlyArray<{
    readonly class: string
    readonly text: string
    readonly seq: number
    readonly origin: string
  }>
  readonly droppedTotal: number
  /** The artifact trail's size and budget; null with the trail off. */
  readonly trail: { readonly tokens: number; readonly maxTokens: number } | null
  /**
   * The agent's behaviour in the steps after the fold (`@warmfold/fold-audit`'s `afterFoldBehaviour`); null when the
   * fold's summary is not in the log.
   */
  readonly rework: {
    readonly stepsObserved: number
    readonly readCalls: number
    readonly repeatedReads: number
    readonly netReworkCalls: number
    readonly loops: number
    readonly stepsToFirstWrite: number | null
  } | null
}

/** A child session this session forked (`agent/fork-start` and its `agent/fork-end`). */
export interface ReportFork extends Logged {
  readonly childSessionId: string
  /** `open`: no end logged yet (the fork was running, or its process ended before the parent resumed). */
  readonly outcome: 'open' | 'finished' | 'failed'
  /** The child's answer (cut to 120 characters), why it failed, or why it is open. */
  readonly text: string
}

/** The parent a fork's log names (`agent/fork`). */
export interface ReportLineage {
  readonly parentSessionId: string
  /** The line of the parent's log of the last message the fork's first request replayed. */
  readonly parentLine: number
}

/** Everything `warmfold report` shows about one session log. */
export interface SessionReport {
  readonly file: string
  readonly sessionId: string
  /**
   * `ledger`: the numbers come from `cache/observation` events; `usage`: the log has none, so
   * they come from the provider usage on `assistant/message` and `compaction/summary` events;
   * `proxy`: a `warmfold proxy` log (provider usage, and the proxy's breaks and compactions).
   */
  readonly source: 'ledger' | 'usage' | 'proxy'
  readonly price: PriceProfile
  readonly requests: readonly ReportRequest[]
  readonly markers: readonly ReportMarker[]
  readonly guards: readonly ReportGuard[]
  readonly pruneDecisions: readonly ReportPruneDecision[]
  /** Every fold whose `compaction/end` carries a timing, in log order. */
  readonly foldTimings: readonly ReportFoldTiming[]
  /** Every fold point, in log order: its attempts, cost, wait and what it dropped. */
  readonly folds: readonly ReportFold[]
  readonly foldTotals: ReportFoldTotals
  /** Every `compaction/audit`, in log order. */
  readonly foldAudits: readonly ReportFoldAudit[]
  /** The child sessions this session forked, in log order. */
  readonly forks: readonly ReportFork[]
  /** The parent this session was forked from, or null for a session that is not a fork. */
  readonly forkOf: ReportLineage | null
  readonly totals: ReportTotals
  /** Sentences the reader must know to read the numbers right (source, missing fields). */
  readonly notes: readonly string[]
}

/** Sums over the session's requests (those without any usage count as requests only). */
export interface ReportTotals {
  readonly requests: number
  /** Requests per purpose, in order of first appearance. */
  readonly purposes: ReadonlyArray<readonly [string, number]>
  readonly prompt: number
  readonly cached: number
  readonly written: number
  readonly uncached: number
  readonly output: number
  /** cached / prompt, or null without prompt tokens. */
  readonly hitRatio: number | null
  /** Requests without any token numbers: not in the sums, not priced. */
  readonly withoutUsage: number
  /** Committed folds and pruned tool results. */
  readonly folds: number
  readonly prunes: number
  readonly breaks: number
  /** In input-token units (1 = one uncached prompt token) over the priced requests. */
  readonly cost: Cost
  /** `cost.total` in dollars, or null when the price has no dollar rate. */
  readonly costUsd: number | null
}
