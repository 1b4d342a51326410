import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { elements, growUntil, mountEngine, oneToolStepPerTurn, ROUTE } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

const THRESHOLD = 6400

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
    const prunes = agent.session.events.filter((event) => event.type === 'compaction/prune') as SessionEvent<'compaction/prune'>[]
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

    const prunes = agent.session.events.filter((event) => event.type === 'compaction/prune') as SessionEvent<'compaction/prune'>[]
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
