import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PruneDecisionData } from '@warmfold/compaction'
import { toolCallBlock } from '@warmfold/llm'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { elements, growUntil, mountEngine, oneToolStepPerTurn, ROUTE } from './engine-fixture.ts'
import { ManualIdleClock } from './manual-idle-clock.ts'
import type { BasicCompactionConfig, PlannedPrune } from '../src/index.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

const THRESHOLD = 6400

/** A prune plan's figures, without the replacement messages (whose ids are fresh on every plan). */
function figures(plan: readonly PlannedPrune[]) {
  return plan.map(({ seq, position, originalTokens, prunedTokens }) => ({
    seq,
    position,
    originalTokens,
    prunedTokens,
  }))
}

describe('prune passes and rule C4', () => {
  it('prune-only: when pruning alone clears the pressure it prunes everywhere and makes no summary call', async () => {
    const engine = await mountEngine({
      engine: { auto: false },
      pruner: { thresholdChars: 1000, headChars: 300, tailChars: 100 },
      conversation: oneToolStepPerTurn,
      resultChars: (step) => (step % 3 === 0 ? 4000 : 600),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('prune-only', { ...ROUTE, reasoningEffort: 'max' })
    await growUntil(agent, () => engine.ctx.tokenMeter.measure(agent.session).totalTokens >= THRESHOLD)
    const plan = engine.ctx.toolResultPruner.planSession(agent.session)
    expect(plan.length).toBeGreaterThan(2)
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).toBeNull()
    expect(engine.summaries()).toHaveLength(0)
    const prunes = agent.session.events.filter(
      (event) => event.type === 'compaction/prune',
    ) as SessionEvent<'compaction/prune'>[]
    expect(prunes.map((event) => event.data.shadowedSeqs[0])).toEqual(plan.map((entry) => entry.seq))
    expect(prunes[0]!.data.shadowedRange.start).toBe(plan[0]!.position)
    expect(engine.ctx.tokenMeter.measure(agent.session).totalTokens).toBeLessThan(THRESHOLD)
    expect(engine.ctx.toolResultPruner.planSession(agent.session)).toEqual([])
    engine.assertClean()
  })

  it('tail-only: when a summary follows, only nodes after the region are rewritten and the summary replays the originals', async () => {
    const engine = await mountEngine({
      engine: { auto: false },
      // Budgets that rewrite every oversized result but save too little to clear the pressure.
      pruner: { thresholdChars: 1000, headChars: 880, tailChars: 60 },
      conversation: oneToolStepPerTurn,
      resultChars: (step) => (step % 3 === 0 ? 1100 : 600),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('tail-only', { ...ROUTE, reasoningEffort: 'max' })
    await growUntil(agent, () => engine.ctx.tokenMeter.measure(agent.session).totalTokens >= THRESHOLD + 1500)
    const lastConversation = engine.conversation().at(-1)!
    const plan = engine.ctx.toolResultPruner.planSession(agent.session)
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).not.toBeNull()
    const region = result!.shadowedRange
    expect(plan.some((entry) => entry.position <= region.end)).toBe(true)
    expect(plan.some((entry) => entry.position > region.end)).toBe(true)

    const prunes = agent.session.events.filter(
      (event) => event.type === 'compaction/prune',
    ) as SessionEvent<'compaction/prune'>[]
    expect(prunes.length).toBe(plan.filter((entry) => entry.position > region.end).length)
    for (const prune of prunes) expect(prune.data.shadowedRange.start).toBeGreaterThan(region.end)
    for (const prune of prunes) expect(prune.seq).toBeLessThan(result!.startSeq)

    const [summary] = engine.summaries()
    const replay = elements(summary!).slice(0, -1)
    const routed = elements(lastConversation)
    replay.forEach((element, index) => expect(element, `prompt element ${index}`).toBe(routed[index]))
    // The region's over-budget results reached the summary unpruned.
    const insideSeqs = new Set(plan.filter((entry) => entry.position <= region.end).map((entry) => entry.seq))
    for (const seq of insideSeqs) expect(result!.shadowedSeqs).toContain(seq)
    engine.assertClean()
  })
})

function decisions(events: readonly SessionEvent[]): PruneDecisionData[] {
  return events
    .filter((event) => event.type === 'compaction/prune-decision')
    .map((event) => event.data as PruneDecisionData)
}

describe('a prune pass that alone clears the pressure lands only where it pays', () => {
  const TTL = 300_000
  /** One early oversized result: pruning it saves ~900 tokens per request but re-prefills everything after it. */
  async function grownSession(
    engineConfig: BasicCompactionConfig = {},
    summary?: EngineHarnessOptions['summary'],
    directory?: string,
  ) {
    const clock = new ManualIdleClock()
    const engine = await mountEngine({
      engine: { auto: false, idle: { enabled: false, clock }, ...engineConfig },
      pruner: { thresholdChars: 1000, headChars: 300, tailChars: 100 },
      conversation: oneToolStepPerTurn,
      resultChars: (step) => (step === 0 ? 4000 : 600),
      cacheTtlMs: TTL,
      ...(summary ? { summary } : {}),
      ...(directory ? { directory } : {}),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('decision', { ...ROUTE, reasoningEffort: 'max' })
    await growUntil(agent, () => engine.ctx.tokenMeter.measure(agent.session).totalTokens >= THRESHOLD)
    const plan = engine.ctx.toolResultPruner.planSession(agent.session)
    expect(plan).toHaveLength(1)
    return { engine, agent, clock, plan }
  }

  it('while the cache is warm and the saving is small, it folds instead, logging the figures first', async () => {
    const { engine, agent, plan } = await grownSession()
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).not.toBeNull()
    expect(engine.summaries()).toHaveLength(1)
    const [decision] = decisions(agent.session.events)
    expect(decision).toMatchObject({
      action: 'fold',
      results: 1,
      cacheWarm: true,
      cacheRead: 0.1,
      cacheWrite: 1.25,
      savedTokens: plan[0]!.originalTokens - plan[0]!.prunedTokens,
    })
    expect(decision!.requestsServed).toBeGreaterThan(0)
    expect(decision!.saving).toBeCloseTo(decision!.savedTokens * decision!.requestsServed * 0.1, 1)
    expect(decision!.cost).toBeCloseTo(decision!.rewrittenTokens * 1.15, 1)
    expect(decision!.saving).toBeLessThan(decision!.cost)
    expect(decision!.reason).toContain('folding instead')
    const types = agent.session.events.map((event) => event.type)
    expect(types.indexOf('compaction/prune-decision')).toBeLessThan(types.indexOf('compaction/start'))
    // The oversized result was in the folded region: the summary replayed it unpruned (C4), nothing rewrote it.
    expect(types).not.toContain('compaction/prune')
    engine.assertClean()
  })

  it('once the cache TTL has run out since the last request, the rewrite breaks nothing, so it lands and no summary call is made', async () => {
    const { engine, agent, clock, plan } = await grownSession()
    clock.time += TTL + 1
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).toBeNull()
    expect(engine.summaries()).toHaveLength(0)
    expect(decisions(agent.session.events)).toMatchObject([{ action: 'prune', cacheWarm: false, cost: 0 }])
    expect(
      agent.session.events
        .filter((event) => event.type === 'compaction/prune')
        .map((event) => (event.data as { shadowedSeqs: number[] }).shadowedSeqs),
    ).toEqual([[plan[0]!.seq]])
    expect(engine.ctx.tokenMeter.measure(agent.session).totalTokens).toBeLessThan(THRESHOLD)
    engine.assertClean()
  })

  it('after a resume the engine has seen no request: it prices the rewrite as warm and folds, however late it resumes', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-prune-resume-'))
    try {
      const first = await grownSession({}, undefined, directory)
      await first.engine.ctx.sessions.flush(first.agent.session)
      harnesses.splice(harnesses.indexOf(first.engine), 1)
      await first.engine.dispose()
      // A fresh host on the same folder, a day after the last request (far past the TTL).
      const clock = new ManualIdleClock()
      clock.time = first.clock.time + 86_400_000
      const second = await mountEngine({
        engine: { auto: false, idle: { enabled: false, clock } },
        pruner: { thresholdChars: 1000, headChars: 300, tailChars: 100 },
        conversation: oneToolStepPerTurn,
        cacheTtlMs: TTL,
        directory,
      })
      harnesses.push(second)
      const agent = await second.ctx.agentLoop.create('decision', { ...ROUTE, reasoningEffort: 'max' })
      expect(figures(second.ctx.toolResultPruner.planSession(agent.session))).toEqual(figures(first.plan))
      const result = await second.ctx.compaction.compactIfNeeded(agent, 'pressure')
      expect(result).not.toBeNull()
      const [decision] = decisions(agent.session.events)
      // The same figures as before the restart, and the rewrite priced at the warm cache's cost.
      expect(decision).toMatchObject({ action: 'fold', cacheWarm: true, results: 1 })
      expect(decision!.cost).toBeCloseTo(decision!.rewrittenTokens * 1.15, 1)
      expect(agent.session.events.some((event) => event.type === 'compaction/prune')).toBe(false)
      second.assertClean()
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('when the fold it preferred cannot be made, the prune lands after all, saying why', async () => {
    // The summarizer answers with a tool call: the summary is refused, nothing is folded.
    const { engine, agent } = await grownSession({}, () => ({ content: [toolCallBlock('summary-call', 'read', '{}')] }))
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).toBeNull()
    expect(engine.summaries().length).toBeGreaterThan(0)
    const [declined, landed] = decisions(agent.session.events)
    expect(declined?.action).toBe('fold')
    expect(landed).toMatchObject({ action: 'prune', savedTokens: declined!.savedTokens })
    expect(landed!.reason).toMatch(/^the fold could not relieve the pressure \(.+\), so the prune lands after all$/)
    expect(agent.session.events.some((event) => event.type === 'compaction/failure')).toBe(false)
    expect(engine.ctx.tokenMeter.measure(agent.session).totalTokens).toBeLessThan(THRESHOLD)
    engine.assertClean()
  })
})
