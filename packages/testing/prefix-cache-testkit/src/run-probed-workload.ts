import type { CacheObservation } from './cache-observation.ts'
import { totalsOf } from './cache-observation.ts'
import type { CacheProbe, ProbeRecord } from './cache-probe.ts'
import type { RunWorkloadHooks, WorkloadRun } from './run-workload.ts'
import { runWorkload } from './run-workload.ts'
import type { WorkloadOptions } from './workload-options.ts'

/** A workload run whose token numbers come from a real cache. */
export interface ProbedWorkloadRun extends WorkloadRun {
  /** What the endpoint reported, one record per request, in order. */
  readonly probeRecords: readonly ProbeRecord[]
  /** The simulator's observations of the same requests (for divergence and rewrite facts). */
  readonly simulated: readonly CacheObservation[]
}

/**
 * Runs the workload with every request also sent to a real cache through `probe`. The
 * returned observations keep the simulator's structural facts (family, divergence, rewrites)
 * but carry the prompt and cached tokens the real endpoint reported.
 *
 * The first failed probe ends the measurement: later requests of the run are not sent to the
 * endpoint (the agent's turn ends on the same error), and the run rejects with that failure.
 * @throws CacheProbeError the first probe failure, naming what the endpoint answered.
 */
export async function runProbedWorkload(
  options: WorkloadOptions,
  probe: CacheProbe,
  hooks: RunWorkloadHooks = {},
): Promise<ProbedWorkloadRun> {
  const first = probe.records.length
  let failure: { error: unknown } | undefined
  const run = await runWorkload(options, {
    ...hooks,
    async onRequest(request) {
      // The agent loop turns a hook's error into the end of the turn, so the probe's own error
      // would surface only as a missing record; it is kept here and rethrown after the run.
      if (failure) throw failure.error
      await hooks.onRequest?.(request)
      try {
        await probe.probe(request)
      } catch (error) {
        failure = { error }
        throw error
      }
    },
  })
  if (failure) throw failure.error
  const records = probe.records.slice(first)
  const simulated = run.cache.observations
  if (records.length !== simulated.length) {
    throw new Error(
      `cache probe: ${records.length} probe records for ${simulated.length} requests; the probe and the workload ` +
        `are out of step`,
    )
  }
  const measured = simulated.map((observation, index) => {
    const record = records[index] as ProbeRecord
    // An endpoint that reports no writes bills none (DeepSeek, llama.cpp): 0, not unknown.
    return Object.freeze({
      ...observation,
      promptTokens: record.promptTokens,
      cachedTokens: record.cachedTokens,
      uncachedTokens: record.uncachedTokens,
      cacheWriteTokens: record.cacheWriteTokens ?? 0,
    })
  })
  const session = measured.filter((observation) => observation.sessionId === run.session.id)
  return {
    ...run,
    summaryCalls: session.filter((observation) => observation.purpose === 'compaction'),
    conversation: session.filter((observation) => observation.purpose === 'conversation'),
    totals: totalsOf(session),
    probeRecords: records,
    simulated,
  }
}
