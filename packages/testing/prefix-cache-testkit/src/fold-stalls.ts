import type { DiscardedFold, FoldTiming, SummaryAttempt } from '@warmfold/compaction'
import type { AnySessionEvent } from '@warmfold/session'
import type { LatencyProfile } from './latency-profile.ts'
import type { PricedRun } from './price-run.ts'
import type { WorkloadRun } from './run-workload.ts'
import type { FoldStall } from './stall-summary.ts'

/** A fold of a run as its bracket logged it. */
interface LoggedFold {
  readonly startSeq: number
  readonly endSeq: number
  readonly timing: FoldTiming
  readonly discarded?: DiscardedFold
  /** Summary calls the bracket made (sent ones: a call the cache guard refused is not among them). */
  readonly calls: number
}

/**
 * The fold stalls of a workload run, one per fold bracket with a timing (discarded folds
 * included), in the order their brackets opened:
 *
 * - `foldMs`, `waitedMs`, `stallSavedMs`: the engine's `compaction/end` timing (`readyAfterMs`,
 *   `waitedMs`, `stallSavedMs`), measured on the run's virtual clock, where every request takes
 *   what the latency profile says;
 * - `postSwapPrefillMs`: what the first conversation request after the checkpoint prefilled of the
 *   part that is new after it (the engine's `postSwapPrefillTokens`, at most what the simulator
 *   charged that request as uncached; 0 when a prewarm had written it), at the profile's prefill
 *   rate; 0 for a discarded fold;
 * - `discarded`: the reason, and what its summary calls cost under the run's prices (the calls
 *   are matched to brackets in send order, each bracket taking as many as it logged attempts).
 *
 * @throws Error when the log and the run disagree: a bracket without its end, or more summary
 *   calls logged than the run sent.
 */
export function foldStalls(run: WorkloadRun, priced: PricedRun, latency: LatencyProfile): FoldStall[] {
  const folds = loggedFolds(run.session.events)
  const summaryCosts = priced.summaryCosts
  const calls = folds.reduce((sum, fold) => sum + fold.calls, 0)
  if (calls !== summaryCosts.length)
    throw new Error(
      `foldStalls: the log's brackets made ${calls} summary calls but the run sent ${summaryCosts.length}`,
    )
  let call = 0
  return folds.map((fold): FoldStall => {
    const costUnits = summaryCosts.slice(call, call + fold.calls).reduce((sum, cost) => sum + cost, 0)
    call += fold.calls
    const { timing, discarded } = fold
    const base = {
      mode: timing.mode,
      foldMs: timing.readyAfterMs,
      waitedMs: timing.waitedMs,
      stallSavedMs: timing.stallSavedMs,
    }
    if (discarded) return { ...base, postSwapPrefillMs: 0, discarded: { reason: discarded.reason, costUnits } }
    const prefilled = Math.min(timing.postSwapPrefillTokens, postSwapUncached(run, priced, fold.endSeq))
    return { ...base, postSwapPrefillMs: (1000 * prefilled) / latency.prefillTokensPerSecond }
  })
}

/**
 * Every bracket of the log that has a timing, in the order they opened; brackets
 * without one (other engines) are left out.
 */
function loggedFolds(events: readonly AnySessionEvent[]): LoggedFold[] {
  const open = new Map<string, { startSeq: number; committedCalls?: number }>()
  const folds: LoggedFold[] = []
  for (const event of events) {
    const data = event.data as {
      compactionId?: string
      attempts?: readonly SummaryAttempt[]
      timing?: FoldTiming
      discarded?: DiscardedFold
      error?: string
    }
    if (event.type === 'compaction/start') open.set(data.compactionId as string, { startSeq: event.seq })
    else if (event.type === 'compaction/summary') {
      const bracket = open.get(data.compactionId as string)
      if (bracket) bracket.committedCalls = data.attempts?.length ?? 1
    } else if (event.type === 'compaction/end') {
      const bracket = open.get(data.compactionId as string)
      if (!bracket)
        throw new Error(
          `foldStalls: compaction/end at seq ${event.seq} closes bracket ${data.compactionId}, which never opened`,
        )
      open.delete(data.compactionId as string)
      const calls = bracket.committedCalls ?? data.attempts?.length ?? 0
      if (data.timing)
        folds.push({
          startSeq: bracket.startSeq,
          endSeq: event.seq,
          timing: data.timing,
          ...(data.discarded ? { discarded: data.discarded } : {}),
          calls,
        })
    }
  }
  if (open.size) throw new Error(`foldStalls: ${open.size} bracket(s) never closed (${[...open.keys()].join(', ')})`)
  return folds.toSorted((left, right) => left.startSeq - right.startSeq)
}

/**
 * Uncached tokens of the first conversation request sent after `seq`; 0 when none was. The
 * priced requests are the run's requests, in the same order.
 */
function postSwapUncached(run: WorkloadRun, priced: PricedRun, seq: number): number {
  const position = run.requests.findIndex(
    (request, index) => request.purpose === 'conversation' && (run.sentAtSeq[index] as number) > seq,
  )
  return position === -1 ? 0 : (priced.requests[position]?.uncachedTokens ?? 0)
}
