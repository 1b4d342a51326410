import type {
  Cost,
  FoldStall,
  LatencyProfile,
  PricedRequest,
  PriceProfile,
  StallSummary,
  WorkloadRun,
} from '@warmfold/prefix-cache-testkit'
import { foldStalls, hitRatio, priceRun, stallSummary, summaryCallAudits } from '@warmfold/prefix-cache-testkit'
import type { FoldAuditReport, SummaryCallAudit } from './fold-audit-report.ts'
import { foldAuditReport, summaryCallAudit } from './fold-audit-report.ts'
import type { BenchArgs } from './parse-bench-args.ts'

/**
 * One summary call in the report. `prefilledTokens` counts the tokens not read from the cache
 * (`promptTokens − cachedTokens`, written to it or not), the table's `summary prefilled`;
 * `uncachedTokens` is the same number under its schema-1 name.
 */
export interface SummaryCallReport {
  promptTokens: number
  cachedTokens: number
  /** The table's `summary prefilled`: promptTokens − cachedTokens (cache writes included). */
  prefilledTokens: number
  /** The same number under its schema-1 name (kept for readers of the document). */
  uncachedTokens: number
  hitRatio: number
  /**
   * Share of the summarized region's characters the request carried verbatim (1 for a full replay; see
   * `regionCoverage`).
   */
  regionCoverage: number
  /** Its cost in input-token units (prompt and output). */
  cost: number
  /**
   * The fold audit of the checkpoint this call wrote (see `fold-audit-report.ts`); null for a call whose fold was not
   * committed (an earlier attempt, a discarded fold) or an engine without the audit.
   */
  audit: SummaryCallAudit | null
}

/**
 * How long a run's conversation waited for its folds, on the latency model's virtual clock
 * (milliseconds): the test kit's stall summary, with every fold listed, discarded ones included
 * (their summary calls are in the run's cost: a discarded fold is paid).
 */
export interface StallReport extends Omit<StallSummary, 'folds' | 'discardedCostUnits'> {
  readonly folds: readonly FoldStall[]
  /** What the discarded folds' summary calls cost, in input-token units (already inside the run's cost). */
  readonly discardedCost: number
}

/**
 * One request of a run (schema version 2), as the test kit prices it. Its `uncachedTokens` keeps schema 1's name: it
 * counts the prefilled tokens, promptTokens − cachedTokens, cacheWriteTokens included.
 */
export type RequestReport = PricedRequest

/** A cost in input-token units: 1 is the price of one uncached prompt token. */
export interface CostReport extends Cost {
  readonly unit: 'input-token'
}

/** One window × strategy run in the report. */
export interface RunReport {
  strategy: string
  window: number
  profile: string
  summaryCalls: SummaryCallReport[]
  conversationRequests: number
  sessionPromptTokens: number
  sessionCachedTokens: number
  /** Prefilled tokens of every request: the table's `session prefilled`. */
  sessionPrefilledTokens: number
  /** The same number under its schema-1 name (kept for readers of the document). */
  sessionUncachedTokens: number
  silentRewrites: number
  /**
   * Summary calls the cache ledger's guard warned about: calls that were not a warm replay of the
   * last conversation request (envelope, tools or replayed history changed; rules C2/C3).
   */
  guardWarnings: number
  completed: boolean
  cost: CostReport
  /** cost.total in dollars, or null when the price has no dollar rate. */
  costUsd: number | null
  /**
   * What the run's own requests would cost if every token were prefilled once and every repeat
   * read from the cache; null when a real cache measured the run (its tokens are not the simulator's).
   */
  floor: { total: number } | null
  /** floor.total / cost.total, or null without a floor. */
  efficiency: number | null
  /**
   * The folds' waits under the workload's latency profile; null when a real cache measured the run (its clock is not
   * the model's).
   */
  stall: StallReport | null
  /** The coding workload's fold audit against the simulator's record; null for the reading workload. */
  foldAudit: FoldAuditReport | null
  requests: RequestReport[]
}

/**
 * The `--json` document, schema version 2. Version 1's fields are unchanged; version 2 adds the
 * workload's price, turns, idleSeconds and stepSeconds, and per run its cost, costUsd, floor,
 * efficiency, requests and guardWarnings, and each summary call's cost. The workload's latency
 * and backgroundFold, each run's sessionPrefilledTokens and each call's prefilledTokens (the
 * table's words for the schema-1 uncached names) were added later within version 2 (nothing was
 * removed or renamed).
 */
export interface BenchReport {
  version: 2
  workload: {
    windows: number[]
    steps: number
    strategies: string[]
    effort: string
    temperature: number | null
    stop: string[] | null
    profile: string
    pruner: string
    summaryRoute: string | null
    /** Where cached tokens came from. */
    cache: 'simulator' | 'llama' | 'probe'
    /** The probed endpoint (`--cache-probe`), else null. */
    cacheEndpoint: string | null
    /** The price profile every cost is computed with. */
    price: PriceProfile
    /** The latency profile (`--latency`): how long each simulated request takes, so the runs' `stall` is in seconds. */
    latency: LatencyProfile
    turns: number
    idleSeconds: number
    stepSeconds: number
    /**
     * `--background-fold on|off`: whether warmfold's engine summarizes beside the conversation (its
     * `background.enabled`).
     */
    backgroundFold: boolean
    /** `--prewarm on|off`: the engine's `background.prewarm`. */
    prewarm: boolean
    /** `--workload reading|coding`. */
    workload: string
    /** `--artifact-trail on|off`: warmfold's `artifactTrail.enabled`. */
    artifactTrail: boolean
  }
  runs: RunReport[]
}

/** The resolved workload part of the report. */
export function workloadOf(args: BenchArgs): BenchReport['workload'] {
  return {
    windows: args.windows,
    steps: args.steps,
    strategies: args.strategies,
    effort: args.effort,
    temperature: args.temperature ?? null,
    stop: args.stop ?? null,
    profile: args.profile,
    pruner: args.pruner,
    summaryRoute: args.summaryRoute ?? null,
    cache: args.cache.kind,
    cacheEndpoint: args.cache.kind === 'probe' ? args.cache.url : null,
    price: { ...args.price },
    latency: { ...args.latency },
    turns: args.turns,
    idleSeconds: args.idleSeconds,
    stepSeconds: args.stepSeconds,
    backgroundFold: args.backgroundFold,
    prewarm: args.prewarm,
    workload: args.workload,
    artifactTrail: args.artifactTrail,
  }
}

/** The report entry of one run, priced with `price`; with `latency` (a simulated run), its folds' stall. */
export function reportRun(
  strategy: string,
  run: WorkloadRun,
  price: PriceProfile,
  latency: LatencyProfile | null,
): RunReport {
  const priced = priceRun(run, price)
  const folds = latency === null ? null : foldStalls(run, priced, latency)
  const audits = summaryCallAudits(run.session.events)
  return {
    strategy,
    window: run.workload.window,
    profile: run.workload.profile,
    summaryCalls: run.summaryCalls.map((call, index) => ({
      promptTokens: call.promptTokens,
      cachedTokens: call.cachedTokens,
      prefilledTokens: call.uncachedTokens,
      uncachedTokens: call.uncachedTokens,
      hitRatio: round(hitRatio(call)),
      regionCoverage: round(run.summaryCoverage[index] as number),
      cost: round(priced.summaryCosts[index] as number),
      audit: summaryCallAudit(audits[index] ?? null),
    })),
    conversationRequests: run.conversation.length,
    sessionPromptTokens: run.totals.promptTokens,
    sessionCachedTokens: run.totals.cachedTokens,
    sessionPrefilledTokens: run.totals.uncachedTokens,
    sessionUncachedTokens: run.totals.uncachedTokens,
    silentRewrites: run.silentRewrites,
    guardWarnings: run.guardWarnings,
    completed: run.completed,
    cost: { unit: 'input-token', ...roundAll(priced.cost) },
    costUsd: priced.costUsd === null ? null : Math.round(priced.costUsd * 1e6) / 1e6,
    floor: priced.floor === null ? null : { total: round(priced.floor.total) },
    efficiency: priced.efficiency === null ? null : round(priced.efficiency),
    stall: folds === null ? null : stallReport(folds, stallSummary(folds)),
    foldAudit: run.workload.workload === 'coding' ? foldAuditReport(run) : null,
    requests: priced.requests.map((request) => ({ ...request, cost: round(request.cost) })),
  }
}

/** The folds' stall with every number rounded; the summary's discarded cost under its schema name. */
function stallReport(folds: readonly FoldStall[], stall: StallSummary): StallReport {
  const { discardedCostUnits, ...waits } = roundAll(stall)
  const rounded = folds.map((fold) => ({
    ...roundAll(fold),
    ...(fold.discarded ? { discarded: roundAll(fold.discarded) } : {}),
  }))
  // `folds` takes the count's place, first.
  return { ...waits, folds: rounded, discardedCost: discardedCostUnits }
}

/** `record` with each number rounded as {@link round} does (in the same key order). */
function roundAll<Record extends object>(record: Record): Record {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, typeof value === 'number' ? round(value) : value]),
  ) as Record
}

function round(value: number): number {
  return Math.round(value * 10000) / 10000
}
