import type { FoldTiming, SummaryAttempt } from '@warmfold/compaction'
import type { GenerateOptions } from '@warmfold/llm'
import type { AnySessionEvent } from '@warmfold/session'
import { describe, expect, it } from 'vitest'
import type { LatencyProfile, PricedRun, WorkloadRun } from '../src/index.ts'
import { foldStalls, stallSummary } from '../src/index.ts'

const LATENCY = { prefillTokensPerSecond: 2000 } as LatencyProfile

const attempt = (finishReason: SummaryAttempt['finishReason']): SummaryAttempt => ({
  reason: 'first',
  maxTokens: 1000,
  finishReason,
})

const timing = (mode: FoldTiming['mode'], readyAfterMs: number, waitedMs: number, postSwap = 0): FoldTiming => ({
  mode,
  startedAt: 0,
  readyAfterMs,
  statusAtThreshold: waitedMs > 0 ? 'pending' : 'none',
  waitedMs,
  stallSavedMs: mode === 'sync' ? 0 : readyAfterMs - waitedMs,
  postSwapPrefillTokens: postSwap,
})

/** A log under construction: events get consecutive seqs; conversation requests are sent at the current length. */
class Log {
  readonly events: AnySessionEvent[] = []
  readonly requests: GenerateOptions[] = []
  readonly sentAtSeq: number[] = []
  readonly uncached: number[] = []

  add(type: string, data: object): this {
    this.events.push({ seq: this.events.length, type, time: 0, data } as unknown as AnySessionEvent)
    return this
  }

  /** A request handed to the provider now (`uncached`: what the simulator charged it as prefilled). */
  send(purpose: 'conversation' | 'compaction', uncached = 0): this {
    this.requests.push({ provider: 'p', model: 'm', messages: [], purpose })
    this.sentAtSeq.push(this.events.length)
    this.uncached.push(uncached)
    return this
  }

  run(): WorkloadRun {
    return {
      session: { events: this.events },
      requests: this.requests,
      sentAtSeq: this.sentAtSeq,
    } as unknown as WorkloadRun
  }

  /** Priced: `summaryCosts` for the summary calls, in order. */
  priced(summaryCosts: number[]): PricedRun {
    return {
      summaryCosts,
      requests: this.uncached.map((uncachedTokens) => ({ uncachedTokens })),
    } as unknown as PricedRun
  }
}

/** A background fold discarded for `reason` after `calls` summary calls. */
function discarded(log: Log, id: string, reason: string, calls: number, readyAfterMs: number, waitedMs: number): void {
  log.add('compaction/start', { compactionId: id, turn: 1, trigger: 'background' })
  for (let call = 0; call < calls; call++) log.send('compaction')
  log.add('compaction/end', {
    compactionId: id,
    turn: 1,
    error: `background fold discarded (${reason})`,
    attempts: Array.from({ length: calls }, (_, index) => attempt(index === calls - 1 ? 'aborted' : 'stop')),
    discarded: { reason, detail: `${reason} in the test` },
    timing: timing('background', readyAfterMs, waitedMs),
  })
}

/** A committed fold whose summary took `calls` calls; the request after it prefilled `uncached` tokens. */
function committed(log: Log, id: string, mode: FoldTiming['mode'], calls: number, fold: FoldTiming, uncached: number) {
  log.add('compaction/start', { compactionId: id, turn: 1, trigger: mode === 'sync' ? 'pressure' : 'background' })
  for (let call = 0; call < calls; call++) log.send('compaction')
  log.add('compaction/summary', {
    compactionId: id,
    attempts: Array.from({ length: calls }, () => attempt('stop')),
  })
  log.add('user/message', { message: { role: 'user', content: 'checkpoint' } })
  log.add('compaction/end', { compactionId: id, turn: 1, timing: fold })
  log.send('conversation', uncached)
}

describe('foldStalls', () => {
  it('gives every discarded fold of a run the cost of its own summary calls, and stallSummary totals all of them', () => {
    const log = new Log().send('conversation', 5000)
    // Two discarded folds (the first made two calls: a larger cap after a spent answer), then a
    // sync fold, then a background fold swapped in, then one more discarded fold.
    discarded(log, 'a', 'stale', 2, 4000, 400)
    discarded(log, 'b', 'timeout', 1, 10_000, 10_000)
    committed(log, 'c', 'sync', 1, timing('sync', 3000, 3000, 1500), 1200)
    committed(log, 'd', 'background', 1, timing('background', 5000, 0, 900), 900)
    discarded(log, 'e', 'route-changed', 1, 700, 0)
    const costs = [11, 22, 44, 88, 176, 352]
    const stalls = foldStalls(log.run(), log.priced(costs), LATENCY)
    expect(stalls.map((stall) => stall.discarded ?? null)).toEqual([
      { reason: 'stale', costUnits: 11 + 22 },
      { reason: 'timeout', costUnits: 44 },
      null,
      null,
      { reason: 'route-changed', costUnits: 352 },
    ])
    expect(stalls.map((stall) => [stall.mode, stall.foldMs, stall.waitedMs, stall.stallSavedMs])).toEqual([
      ['background', 4000, 400, 3600],
      ['background', 10_000, 10_000, 0],
      ['sync', 3000, 3000, 0],
      ['background', 5000, 0, 5000],
      ['background', 700, 0, 700],
    ])
    // The post-swap prefill: the engine's estimate, at most what the next request was charged
    // as prefilled (1,500 > 1,200 → 1,200 tokens), at 2,000 tokens/s; 0 for a discarded fold.
    expect(stalls.map((stall) => stall.postSwapPrefillMs)).toEqual([0, 0, 600, 450, 0])
    expect(stallSummary(stalls)).toMatchObject({
      folds: 5,
      discardedFolds: 3,
      discardedCostUnits: 11 + 22 + 44 + 352,
      totalWaitMs: 13_400,
    })
  })

  it('skips brackets without a timing (an engine that does not measure them) but still matches the calls they made', () => {
    const log = new Log()
    log.add('compaction/start', { compactionId: 'untimed', turn: 1, trigger: 'pressure' })
    log.send('compaction')
    log.add('compaction/end', { compactionId: 'untimed', turn: 1, error: 'refused', attempts: [attempt('stop')] })
    discarded(log, 'x', 'stale', 1, 100, 0)
    discarded(log, 'y', 'stale', 1, 100, 0)
    expect(foldStalls(log.run(), log.priced([1, 2, 4]), LATENCY).map((stall) => stall.discarded?.costUnits)).toEqual([
      2, 4,
    ])
  })

  it('throws when the log and the run disagree: a bracket that never closed, more calls logged than sent', () => {
    const open = new Log()
    open.add('compaction/start', { compactionId: 'open', turn: 1, trigger: 'background' })
    expect(() => foldStalls(open.run(), open.priced([]), LATENCY)).toThrow(
      'foldStalls: 1 bracket(s) never closed (open)',
    )
    const more = new Log()
    discarded(more, 'a', 'stale', 2, 100, 0)
    expect(() => foldStalls(more.run(), more.priced([5]), LATENCY)).toThrow(
      "foldStalls: the log's brackets made 2 summary calls but the run sent 1",
    )
    const stray = new Log().add('compaction/end', { compactionId: 'nowhere', turn: 1 })
    expect(() => foldStalls(stray.run(), stray.priced([]), LATENCY)).toThrow(
      'foldStalls: compaction/end at seq 0 closes bracket nowhere, which never opened',
    )
  })
})

describe('stallSummary with several discarded folds', () => {
  it('counts each discarded fold and adds up every one of their costs', () => {
    const fold = { mode: 'background', foldMs: 1000, waitedMs: 0, stallSavedMs: 1000, postSwapPrefillMs: 0 } as const
    expect(
      stallSummary([
        { ...fold, discarded: { reason: 'stale', costUnits: 100 } },
        fold,
        { ...fold, discarded: { reason: 'stale', costUnits: 250 } },
        { ...fold, discarded: { reason: 'timeout', costUnits: 0.5 } },
      ]),
    ).toMatchObject({ folds: 4, discardedFolds: 3, discardedCostUnits: 350.5 })
  })
})
