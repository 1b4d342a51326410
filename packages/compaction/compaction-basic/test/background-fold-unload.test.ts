import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost } from './background-fold-fixture.ts'
import {
  agentOf,
  backgroundHost,
  endsOf,
  expectEveryMessageKept,
  openFolds,
  startsOf,
  turnsUntil,
  until,
} from './background-fold-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

async function host(): Promise<BackgroundHost> {
  const created = await backgroundHost()
  hosts.push(created)
  return created
}

const UNLOADED = /^background fold discarded \(unloaded\): the compaction engine was unloaded/

/** Turns of the event loop for late work (a settled call, a swap while idle) to show itself. */
async function lateWork(): Promise<void> {
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 0))
}

describe('unloading the engine with a background fold open', () => {
  it('a summary call in flight is aborted, its bracket closed (unloaded) and nothing is committed when its answer would have come', async () => {
    const background = await host()
    background.summaries.hold = true
    const agent = await agentOf(background)
    expect(await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)).toBe('done')
    const [held] = background.summaries.held
    const signal = held!.request.signal as AbortSignal
    expect(signal.aborted).toBe(false)
    background.harness.engineScope.dispose()
    expect(signal.aborted).toBe(true)
    const [end] = endsOf(agent.session)
    expect(end).toMatchObject({
      error: expect.stringMatching(UNLOADED),
      discarded: { reason: 'unloaded' },
      attempts: [expect.objectContaining({ finishReason: 'aborted' })],
    })
    // The answer the provider would still have sent: nothing swaps it in.
    held!.release()
    await lateWork()
    expect(agent.session.events.filter((event) => event.type === 'compaction/summary')).toEqual([])
    expect(openFolds(agent.session)).toBe(0)
    // The conversation goes on without the engine.
    agent.followup('Go on.')
    await agent.whenIdle()
    expect(startsOf(agent.session)).toHaveLength(1)
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })

  it('a summary in hand waiting for the next request boundary is discarded, not swapped in', async () => {
    const background = await host()
    background.summaries.hold = true
    const agent = await agentOf(background)
    expect(await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)).toBe('done')
    // The summary lands during the next turn's first request, then the engine is unloaded there.
    let unloaded = false
    background.harness.ctx.on('llm/stream', async (request) => {
      if (request.purpose !== 'conversation' || unloaded) return
      unloaded = true
      background.summaries.held.shift()?.release()
      await background.engine.whenFoldsSettle(agent.session)
      expect(openFolds(agent.session)).toBe(1)
      background.harness.engineScope.dispose()
    })
    agent.followup('Read one more file.')
    await agent.whenIdle()
    await lateWork()
    expect(unloaded).toBe(true)
    const [end] = endsOf(agent.session)
    expect(end).toMatchObject({ error: expect.stringMatching(UNLOADED), discarded: { reason: 'unloaded' } })
    expect(agent.session.events.filter((event) => event.type === 'compaction/summary')).toEqual([])
    expect(openFolds(agent.session)).toBe(0)
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })

  it('a turn waiting at the threshold for the fold stops waiting and goes on without the engine', async () => {
    const background = await host()
    background.summaries.hold = true
    const agent = await agentOf(background)
    expect(await turnsUntil(background, agent, () => false)).toBe('blocked')
    background.harness.engineScope.dispose()
    let idle = false
    void agent.whenIdle().then(() => (idle = true))
    await until(() => idle, 'the waiting turn going on after the engine was unloaded')
    expect(agent.session.events.findLast((event) => event.type === 'turn/end')?.data).toMatchObject({
      reason: 'stop',
    })
    // No synchronous fold replaced the discarded one, and the wait's timer is gone.
    expect(startsOf(agent.session)).toHaveLength(1)
    expect(endsOf(agent.session)).toEqual([
      expect.objectContaining({ discarded: expect.objectContaining({ reason: 'unloaded' }) }),
    ])
    expect(background.harness.summaries()).toHaveLength(1)
    expect(background.clock.pending()).toEqual([])
    background.harness.assertClean()
  })
})
