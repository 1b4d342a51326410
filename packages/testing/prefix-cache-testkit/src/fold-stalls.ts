import type { CompactionAuditData, DiscardedFold, FoldTiming, SummaryAttempt } from '@warmfold/compaction'
import type { AnySessionEvent } from '@warmfold/session'
import type { LatencyProfile } from './latency-profile.ts'
import type { PricedRun } from './price-run.ts'
import type { WorkloadRun } from './run-workload.ts'
import type { FoldStall } from './stall-summary.ts'

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
  const brackets = foldBrackets(run.session.events, true)
  const summaryCosts = priced.summaryCosts
  const calls = brackets.reduce((sum, fold) => sum + fold.calls, 0)
  if (calls !== summaryCosts.length)
    throw new Error(
      `foldStalls: the log's brackets made ${calls} summary calls but the run sent ${summaryCosts.length}`,
    )
  // Every bracket takes its calls in send order, timed or not (a refused sync fold logs its
  // calls without a timing): skipping one would hand its calls to the brackets after it.
  let call = 0
  return brackets.flatMap((fold): FoldStall[] => {
    const costUnits = summaryCosts.slice(call, call + fold.calls).reduce((sum, price) => sum + price, 0)
    call += fold.calls
    const { timing, discarded } = fold
    if (!timing) return []
    const base = {
      mode: timing.mode,
      foldMs: timing.readyAfterMs,
      waitedMs: timing.waitedMs,
      stallSavedMs: timing.stallSavedMs,
    }
    if (discarded) return [{ ...base, postSwapPrefillMs: 0, discarded: { reason: discarded.reason, costUnits } }]
    const prefilled = Math.min(timing.postSwapPrefillTokens, postSwapUncached(run, priced, fold.endSeq as number))
    return [{ ...base, postSwapPrefillMs: (1000 * prefilled) / latency.prefillTokensPerSecond }]
  })
}

/** A fold bracket of a log, from its `compaction/start` to its `compaction/end`. */
export interface FoldBracket {
  readonly startSeq: number
  /** The seq of its end; undefined while it is open. */
  endSeq?: number
  /**
   * The summary calls it sent: its committed summary's attempts, else its end's (sent ones: a call the cache guard
   * refused is not among them).
   */
  calls: number
  /** Its end's timing and discard, from engines that measure them. */
  timing?: FoldTiming
  discarded?: DiscardedFold
  /** Its `compaction/audit`, or null. */
  audit: CompactionAuditData | null
}

/**
 * Every fold bracket of `events`, in the order they opened.
 * @throws Error, when `strict`, naming a `compaction/end` whose bracket never opened or the brackets that never close.
 */
export function foldBrackets(events: readonly AnySessionEvent[], strict = false): FoldBracket[] {
  const brackets: FoldBracket[] = []
  const open = new Map<string, FoldBracket>()
  for (const event of events) {
    const data = event.data as { compactionId?: string; attempts?: readonly SummaryAttempt[] } & Pick<
      FoldBracket,
      'timing' | 'discarded'
    >
    const id = data.compactionId as string
    const bracket = open.get(id)
    if (event.type === 'compaction/start') {
      open.set(id, { startSeq: event.seq, calls: 0, audit: null })
      brackets.push(open.get(id)!)
    } else if (event.type === 'compaction/summary' && bracket) bracket.calls = data.attempts?.length ?? 1
    else if (event.type === 'compaction/audit' && bracket) bracket.audit = event.data as CompactionAuditData
    else if (event.type === 'compaction/end' && bracket) {
      open.delete(id)
      Object.assign(bracket, { endSeq: event.seq, timing: data.timing, discarded: data.discarded })
      if (bracket.calls === 0) bracket.calls = data.attempts?.length ?? 0
    } else if (event.type === 'compaction/end' && strict)
      throw new Error(`foldStalls: compaction/end at seq ${event.seq} closes bracket ${id}, which never opened`)
  }
  if (strict && open.size)
    throw new Error(`foldStalls: ${open.size} bracket(s) never closed (${[...open.keys()].join(', ')})`)
  return brackets
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
