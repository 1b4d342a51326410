import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost, BackgroundHostOptions } from './background-fold-fixture.ts'
import {
  agentOf,
  backgroundHost,
  endsOf,
  expectEveryMessageKept,
  openFolds,
  startsOf,
  THRESHOLD,
  totalTokens,
  turnsUntil,
} from './background-fold-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

async function host(options: BackgroundHostOptions = {}): Promise<BackgroundHost> {
  const created = await backgroundHost(options)
  hosts.push(created)
  return created
}

/** A host whose first background fold is in flight (its summary call held) and whose conversation is blocked at H waiting for it. */
async function blockedAtThreshold(options: BackgroundHostOptions = {}) {
  const background = await host(options)
  background.summaries.hold = true
  const agent = await agentOf(background)
  expect(await turnsUntil(background, agent, () => false)).toBe('blocked')
  expect(startsOf(agent.session).map((start) => start.trigger)).toEqual(['background'])
  expect(openFolds(agent.session)).toBe(1)
  expect(background.summaries.held).toHaveLength(1)
  return { background, agent, requestsWhenBlocked: background.harness.conversation().length }
}

describe('at the pressure threshold H', () => {
  it("with a fold pending, the conversation waits for it on the engine's clock (statusAtThreshold pending, waitedMs > 0), then it is swapped in", async () => {
    const { background, agent, requestsWhenBlocked } = await blockedAtThreshold()
    expect(totalTokens(background, agent.session)).toBeGreaterThanOrEqual(THRESHOLD)
    // The summary takes 7 s more on the engine's clock; no conversation request goes out meanwhile.
    await background.clock.advance(7000)
    expect(background.harness.conversation()).toHaveLength(requestsWhenBlocked)
    background.summaries.held[0]!.release()
    await agent.whenIdle()
    const [end] = endsOf(agent.session)
    expect(end).not.toHaveProperty('error')
    expect(end?.timing).toMatchObject({ mode: 'background', statusAtThreshold: 'pending', waitedMs: 7000 })
    expect(end?.timing?.readyAfterMs).toBeGreaterThanOrEqual(7000)
    expect(end?.timing?.stallSavedMs).toBe((end?.timing?.readyAfterMs ?? 0) - 7000)
    // The request the conversation waited to send is below H.
    const next = background.timeline.findLast((entry) => entry.kind === 'request')
    expect(next?.kind === 'request' && next.totalTokens).toBeLessThan(THRESHOLD)
    expect(startsOf(agent.session)).toHaveLength(1)
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })

  it('with a fold ready, swaps it in at once without waiting (statusAtThreshold ready, waitedMs 0)', async () => {
    const background = await host()
    background.summaries.hold = true
    const agent = await agentOf(background)
    await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)
    expect(totalTokens(background, agent.session)).toBeLessThan(THRESHOLD - 1000)
    // The next turn's tool result takes the request past H; the summary arrives while its tool call is answered.
    background.results.push(6000)
    // `llm/stream` listeners are awaited: the request goes out once the summary is in hand.
    background.harness.ctx.on('llm/stream', async (request) => {
      if (request.purpose !== 'conversation') return
      background.summaries.held.shift()?.release()
      await background.engine.whenFoldsSettle(agent.session)
    })
    // What the boundary after the tool result measured before the swap: at or above H.
    let beforeSwap = 0
    background.harness.ctx.on('session/event', (session, event) => {
      if (event.type === 'tool/result') beforeSwap = totalTokens(background, session)
    })
    agent.followup('Read the large file.')
    await agent.whenIdle()
    expect(beforeSwap).toBeGreaterThanOrEqual(THRESHOLD)
    // No request at or above H was sent: the swap came first.
    const crossed = background.timeline.filter((entry) => entry.kind === 'request' && entry.totalTokens >= THRESHOLD)
    expect(crossed).toEqual([])
    const [end] = endsOf(agent.session)
    expect(end).not.toHaveProperty('error')
    expect(end?.timing).toMatchObject({ mode: 'background', statusAtThreshold: 'ready', waitedMs: 0 })
    expect(background.clock.pending()).toEqual([])
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })

  it('past background.maxWaitMs, the fold is discarded as timeout (its wait and cost on compaction/end) and a synchronous fold follows', async () => {
    const { background, agent } = await blockedAtThreshold({ background: { maxWaitMs: 10_000 } })
    background.summaries.hold = false
    await background.clock.advance(10_000)
    await agent.whenIdle()
    expect(startsOf(agent.session).map((start) => start.trigger)).toEqual(['background', 'pressure'])
    const [discarded, sync] = endsOf(agent.session)
    expect(discarded).toMatchObject({
      error: expect.stringMatching(/^background fold discarded \(timeout\): .*background\.maxWaitMs \(10000 ms\)/),
      discarded: { reason: 'timeout', detail: expect.stringContaining('maxWaitMs') },
      timing: { mode: 'background', statusAtThreshold: 'pending', waitedMs: 10_000 },
    })
    expect(sync).not.toHaveProperty('error')
    expect(sync?.timing).toMatchObject({ mode: 'sync', statusAtThreshold: 'none' })
    // The held call was aborted: the discard carries it, and the sync fold made its own.
    expect(background.harness.summaries()).toHaveLength(2)
    expect(totalTokens(background, agent.session)).toBeLessThan(THRESHOLD)
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })
})
