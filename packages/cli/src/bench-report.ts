import type { WorkloadRun } from '@warmfold/prefix-cache-testkit'
import { hitRatio } from '@warmfold/prefix-cache-testkit'
import type { BenchArgs } from './parse-bench-args.ts'

/** One summary call in the report. */
export interface SummaryCallReport {
  promptTokens: number
  cachedTokens: number
  uncachedTokens: number
  hitRatio: number
  /** Share of the summarized region's characters the request carried verbatim (1 for a full replay; see `regionCoverage`). */
  regionCoverage: number
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
  sessionUncachedTokens: number
  silentRewrites: number
  completed: boolean
}

/** The `--json` document (schema version 1). */
export interface BenchReport {
  version: 1
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
  }
}

/** The report entry of one run. */
export function reportRun(strategy: string, run: WorkloadRun): RunReport {
  return {
    strategy,
    window: run.workload.window,
    profile: run.workload.profile,
    summaryCalls: run.summaryCalls.map((call, index) => ({
      promptTokens: call.promptTokens,
      cachedTokens: call.cachedTokens,
      uncachedTokens: call.uncachedTokens,
      hitRatio: round(hitRatio(call)),
      regionCoverage: round(run.summaryCoverage[index] as number),
    })),
    conversationRequests: run.conversation.length,
    sessionPromptTokens: run.totals.promptTokens,
    sessionCachedTokens: run.totals.cachedTokens,
    sessionUncachedTokens: run.totals.uncachedTokens,
    silentRewrites: run.silentRewrites,
    completed: run.completed,
  }
}

function round(value: number): number {
  return Math.round(value * 10000) / 10000
}
