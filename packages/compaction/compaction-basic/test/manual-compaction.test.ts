import { ManualCompactionError } from '@warmfold/compaction'
import { createUserMessage } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { mountEngine, oneToolStepPerTurn, ROUTE, SUMMARY } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function idleAgent(turns: number, summary?: () => ScriptedReply | Promise<ScriptedReply>) {
  const engine = await mountEngine({ conversation: oneToolStepPerTurn, summary })
  harnesses.push(engine)
  const agent = await engine.ctx.agentLoop.create('manual', { ...ROUTE, reasoningEffort: 'max' })
  for (let turn = 0; turn < turns; turn++) {
    agent.followup(`turn ${turn}`)
    await agent.whenIdle()
  }
  return { engine, agent }
}

describe('manual compaction (compactNow)', () => {
  it('compacts below the threshold with retain 0, keeping the newest unit, and flushes', async () => {
    const { engine, agent } = await idleAgent(3)
    expect(engine.ctx.tokenMeter.measure(agent.session).totalTokens).toBeLessThan(6400)
    const before = agent.session.surface.nodes
    const result = await engine.ctx.compaction.compactNow(agent)
    expect(result).not.toBeNull()
    expect(result!.shadowedRange).toEqual({ start: 0, end: before.length - 2 })
    expect(agent.session.surface.nodes).toEqual([result!.checkpointSeq, before.at(-1)])
    expect(agent.session.events.find((event) => event.seq === result!.startSeq)?.data).toMatchObject({
      turn: null,
      trigger: 'manual',
    })
    engine.assertClean()
  })

  it('returns null without writing when there is nothing to compact', async () => {
    const { engine, agent } = await idleAgent(0)
    expect(await engine.ctx.compaction.compactNow(agent)).toBeNull()
    expect(agent.session.length).toBe(0)
    engine.assertClean()
  })

  it('is refused with code busy while a turn runs', async () => {
    const engine = await mountEngine({ conversation: () => new Promise<ScriptedReply>(() => {}) })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('busy', { ...ROUTE })
    agent.followup('hang')
    const error = await engine.ctx.compaction.compactNow(agent).catch((reason: unknown) => reason)
    expect(ManualCompactionError.isInstance(error)).toBe(true)
    expect((error as ManualCompactionError).code).toBe('busy')
    agent.abort()
    await agent.whenIdle()
    engine.assertClean()
  })

  it('tolerates appends after the selected span while summarizing', async () => {
    let session: Session | undefined
    const { engine, agent } = await idleAgent(3, () => {
      session!.append('user/message', { message: createUserMessage('appended during the call') }, 'append')
      return { content: SUMMARY }
    })
    session = agent.session
    const result = await engine.ctx.compaction.compactNow(agent)
    expect(result).not.toBeNull()
    expect(agent.session.deriveMessages().at(-1)?.content).toEqual([{ type: 'text', text: 'appended during the call' }])
    engine.assertClean()
  })

  it('maps a refused summary and a cancellation to ManualCompactionError codes', async () => {
    const refused = await idleAgent(3, () => ({ content: 'x', finishReason: 'max-tokens' }))
    const error = await refused.engine.ctx.compaction.compactNow(refused.agent).catch((reason: unknown) => reason)
    expect(error).toMatchObject({ name: 'ManualCompactionError', code: 'summary' })
    expect((error as Error).message).toMatch(/truncated/)

    let started!: () => void
    const inFlight = new Promise<void>((resolve) => (started = resolve))
    const cancelled = await idleAgent(3, () => {
      started()
      return new Promise<ScriptedReply>(() => {})
    })
    const controller = new AbortController()
    const running = cancelled.engine.ctx.compaction
      .compactNow(cancelled.agent, controller.signal)
      .catch((reason: unknown) => reason)
    await inFlight
    controller.abort(new Error('stop'))
    expect(await running).toMatchObject({ code: 'cancelled' })
    refused.engine.assertClean()
    cancelled.engine.assertClean()
  })
})
