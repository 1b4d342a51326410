import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { createAssistantMessage, createUserMessage, textBlock } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BenchReport, SessionReport } from '../src/index.ts'
import { cli } from './run-cli.ts'

// `warmfold report` per fold point: what it cost in dollars (summary calls and the first request
// after the swap), what it made the conversation wait, what it dropped, with the attempts thrown
// away before it on the same row, and the thrown-away attempts totalled.

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-report-folds-'))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

/** A `cache/observation` as the ledger logs it, with the provider's disjoint token buckets. */
function observe(session: Session, purpose: string, tokens: { cached: number; written: number; output: number }): void {
  session.append('cache/observation', {
    purpose,
    provider: 'p',
    model: 'm',
    ...tokens,
    uncached: 0,
    chars: 4 * (tokens.cached + tokens.written),
    expected: 0,
    divergence: { part: 'none' },
    cause: 'none',
    idleMs: null,
    finish: 'stop',
  } as never)
}

/** Dollars of `units` under deepseek's $0.30 per million uncached input tokens. */
const usd = (units: number) => (units * 0.3) / 1_000_000

const timing = (mode: 'sync' | 'background', readyAfterMs: number, waitedMs: number) => ({
  mode,
  startedAt: 0,
  readyAfterMs,
  statusAtThreshold: mode === 'sync' ? ('none' as const) : ('pending' as const),
  waitedMs,
  stallSavedMs: readyAfterMs - waitedMs,
  postSwapPrefillTokens: 900,
})

/**
 * The log of a fold point where a background fold went stale (its summary in hand, 0.4 s waited
 * for it at the threshold) and the engine then folded synchronously (7 s), then a background fold
 * whose call the session's close aborted. Prices under deepseek (read 0.02×, write 1×, output 4×,
 * $0.30 per million): the stale call 0.02 × 3000 + 400 + 4 × 600 = 2,860 units, the sync call
 * 0.02 × 3000 + 500 + 4 × 700 = 3,360, the request after the swap 0.02 × 200 + 1,000 + 4 × 50 =
 * 1,204, the aborted call 0.02 × 1000 + 100 = 120.
 */
async function staleThenSyncLog(id: string): Promise<string> {
  const ctx = new Context()
  await ctx.start()
  try {
    ctx.plugin(SessionStore, { store: 'file', directory })
    const session = await ctx.sessions.create(id)
    session.append('user/message', { message: createUserMessage('Fix the failing tests.') }, 'append')
    session.append(
      'assistant/message',
      { message: createAssistantMessage([textBlock('Reading src/a.ts.')], { provider: 'p', model: 'm' }) },
      'append',
    )
    observe(session, 'conversation', { cached: 0, written: 3000, output: 20 })
    session.append('compaction/start', { compactionId: 'stale', turn: 1, trigger: 'background' })
    observe(session, 'compaction', { cached: 3000, written: 400, output: 600 })
    session.append('compaction/end', {
      compactionId: 'stale',
      turn: 1,
      error: 'background fold discarded (stale): the request after the swap would be about 4311 tokens',
      discarded: { reason: 'stale', detail: 'the request after the swap would be about 4311 tokens' },
      attempts: [{ reason: 'first', finishReason: 'stop', usage: { inputTokens: 400, cacheReadTokens: 3000 } }],
      timing: timing('background', 8000, 400),
    } as never)
    session.append('compaction/start', { compactionId: 'sync', turn: 1, trigger: 'pressure' })
    observe(session, 'compaction', { cached: 3000, written: 500, output: 700 })
    session.unit(() => {
      session.append('compaction/summary', {
        compactionId: 'sync',
        summary: [textBlock('Goal: fix the failing tests.')],
        shadowedRange: { start: 0, end: 1 },
        shadowedSeqs: [0, 1],
        shadowedTokenCount: 2500,
        provider: 'p',
        model: 'm',
      } as never)
      session.append(
        'user/message',
        { message: createUserMessage('<summary>Goal: fix the failing tests.</summary>') },
        { op: 'replace', start: 0, end: 1, sourceEventSeqs: [0, 1] },
      )
      session.append('compaction/audit', {
        compactionId: 'sync',
        classes: { path: { seen: 2, kept: 1 } },
        dropped: [{ class: 'path', text: 'src/a.ts', seq: 1, origin: 'assistant' }],
        droppedTotal: 1,
        trail: null,
      } as never)
    })
    session.append('compaction/end', { compactionId: 'sync', turn: 1, timing: timing('sync', 7000, 7000) } as never)
    observe(session, 'conversation', { cached: 200, written: 1000, output: 50 })
    session.append('compaction/start', { compactionId: 'aborted', turn: 2, trigger: 'background' })
    observe(session, 'compaction', { cached: 1000, written: 100, output: 0 })
    session.append('compaction/end', {
      compactionId: 'aborted',
      turn: 2,
      error: 'background fold discarded (closed): the session closed',
      discarded: { reason: 'closed', detail: 'the session closed' },
      attempts: [{ reason: 'first', finishReason: 'aborted' }],
      timing: timing('background', 1500, 0),
    } as never)
    await ctx.sessions.flush(session)
  } finally {
    await ctx.stop()
  }
  return join(directory, `${id}.jsonl`)
}

describe('warmfold report: what each fold cost and made the conversation wait', () => {
  it('puts a stale background fold and the sync fold after it on one row, with their costs and waits added', async () => {
    const log = await staleThenSyncLog('stale-then-sync')
    const result = await cli(['report', log, '--json'])
    expect(result.stderr).toBe('')
    const report = JSON.parse(result.stdout) as SessionReport
    expect(report.folds).toHaveLength(2)
    const [fold, trailing] = report.folds
    expect(fold).toMatchObject({
      committed: true,
      summaryCalls: 2,
      afterSwap: { request: 4, cost: 1204 },
      waitedMs: 7400,
      folded: { messages: 2, tokens: 2500 },
      dropped: { total: 1, items: ['path src/a.ts'] },
      attempts: [
        { compactionId: 'stale', trigger: 'background', mode: 'background', outcome: 'discarded', cost: 2860 },
        { compactionId: 'sync', trigger: 'pressure', mode: 'sync', outcome: 'committed', cost: 3360, reason: null },
      ],
    })
    expect(fold!.attempts[0]!.reason).toBe('stale: the request after the swap would be about 4311 tokens')
    expect(fold!.summaryCost).toBeCloseTo(2860 + 3360, 6)
    expect(fold!.cost).toBeCloseTo(2860 + 3360 + 1204, 6)
    expect(fold!.costUsd).toBeCloseTo(usd(2860 + 3360 + 1204), 12)
    expect(trailing).toMatchObject({ committed: false, afterSwap: null, waitedMs: 0, folded: null, dropped: null })
    expect(trailing!.attempts.map((attempt) => attempt.outcome)).toEqual(['discarded'])
    expect(report.foldTotals).toMatchObject({ folds: 1, waitedMs: 7400 })
    expect(report.foldTotals.cost).toBeCloseTo(2860 + 3360 + 1204 + 120, 6)
    expect(report.foldTotals.thrownAway.attempts).toBe(2)
    expect(report.foldTotals.thrownAway.cost).toBeCloseTo(2860 + 120, 6)
    expect(report.foldTotals.thrownAway.costUsd).toBeCloseTo(usd(2860 + 120), 12)
    expect(report.foldTotals.thrownAway.waitedMs).toBe(400)
  })

  it('the terminal and the HTML page show each fold point in dollars, its wait and what it dropped, and the totals', async () => {
    const log = await staleThenSyncLog('stale-then-sync-text')
    const text = (await cli(['report', log])).stdout.split('\n')
    const start = text.findIndex((line) => line.startsWith('Folds ('))
    expect(text.slice(start, start + 6)).toEqual([
      'Folds (2 fold point(s); cost = summary calls + the first request after the swap, wait = what the ' +
        'conversation waited, attempts thrown away at the same point included):',
      '  line 9, after request #3: sync fold (pressure): $0.00223 (2 summary call(s) $0.00187, request #4 after the ' +
        'swap $0.00036), waited 7.4 s; folded 2 message(s) (~2,500 tokens); dropped 1 artifact(s): path src/a.ts',
      '    thrown away: background fold discarded (stale: the request after the swap would be about 4311 tokens): 1 ' +
        'summary call(s) $0.00086, waited 0.4 s',
      '  line 16, after request #5: no checkpoint: $0.00004 (1 summary call(s) $0.00004), waited 0.0 s',
      '    thrown away: background fold discarded (closed: the session closed): 1 summary call(s) $0.00004, waited 0.0 s',
      '  in all: $0.00226 over 1 fold(s), waited 7.4 s; thrown away: 2 attempt(s) (discarded or failed), $0.00089, ' +
        'waited 0.4 s',
    ])
    const out = join(directory, 'folds.html')
    expect((await cli(['report', log, '--out', out])).code).toBe(0)
    const page = await readFile(out, 'utf8')
    expect(page).toContain('<section id="folds"><h2>Folds (2)</h2>')
    expect(page).toContain(
      '<td>9</td><td>#3</td><td>sync fold (pressure)</td><td>background fold discarded (stale: the request after ' +
        'the swap would be about 4311 tokens): 1 summary call(s) $0.00086, waited 0.4 s</td><td>$0.00223 (2 summary ' +
        'call(s) $0.00187, request #4 after the swap $0.00036)</td><td>7.4 s</td><td>folded 2 message(s) (~2,500 ' +
        'tokens); dropped 1 artifact(s): path src/a.ts</td>',
    )
    expect(page).toContain(
      '<p class="fold-totals">in all: $0.00226 over 1 fold(s), waited 7.4 s; thrown away: 2 attempt(s) (discarded ' +
        'or failed), $0.00089, waited 0.4 s</p>',
    )
  })

  it('says a summary call the discard aborted was aborted, not that its summary was in hand', async () => {
    const log = await staleThenSyncLog('aborted-summary')
    const text = (await cli(['report', log])).stdout
    expect(text).toContain(': background: summary in hand after 8.0 s, the conversation waited 0.4 s')
    expect(text).toContain(': background: summary call aborted after 1.5 s, the conversation waited 0.0 s')
    const report = JSON.parse((await cli(['report', log, '--json'])).stdout) as SessionReport
    expect(report.foldTimings.map((fold) => fold.summary)).toEqual(['in-hand', 'in-hand', 'aborted'])
  })

  it("a bench session's thrown-away folds cost what the bench counted as discarded, and its summary calls add up", async () => {
    // The 8k window with the default pruner at effort high: folds that go stale, where there are any.
    const kept = await mkdtemp(join(directory, 'bench-'))
    const bench = await cli([
      'bench',
      '--windows',
      '8000',
      '--strategies',
      'warmfold,legacy',
      '--pruner',
      'default',
      '--effort',
      'high',
      '--json',
      '--keep-sessions',
      kept,
    ])
    expect(bench.code).toBe(0)
    for (const run of (JSON.parse(bench.stdout) as BenchReport).runs) {
      const report = JSON.parse(
        (await cli(['report', join(kept, `${run.strategy}-8000.jsonl`), '--json'])).stdout,
      ) as SessionReport
      expect(report.foldTotals.thrownAway.attempts).toBe(run.stall!.discardedFolds)
      expect(report.foldTotals.thrownAway.cost).toBeCloseTo(run.stall!.discardedCost, 2)
      expect(report.foldTotals.folds).toBe(report.totals.folds)
      const summaryCalls = report.requests.filter((request) => request.purpose === 'compaction')
      expect(report.folds.reduce((sum, fold) => sum + fold.summaryCalls, 0)).toBe(summaryCalls.length)
      expect(report.folds.reduce((sum, fold) => sum + fold.summaryCost, 0)).toBeCloseTo(
        summaryCalls.reduce((sum, request) => sum + request.billed!.cost, 0),
        6,
      )
      // Each committed fold's wait is what the bench measured for it and the discarded folds before it.
      expect(report.foldTotals.waitedMs).toBeCloseTo(run.stall!.totalWaitMs, 0)
    }
  }, 60_000)
})
