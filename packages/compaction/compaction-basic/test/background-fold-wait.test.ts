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
  until,
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

/** The request size of the last conversation request `host` sent. */
function lastRequestTokens(background: BackgroundHost): number | undefined {
  const last = background.timeline.findLast((entry) => entry.kind === 'request')
  return last?.kind === 'request' ? last.totalTokens : undefined
}

describe('the wait at the pressure threshold H', () => {
  it('a fold that lands within maxWaitMs is used: the deadline runs from the threshold, not from the fold start', async () => {
    const background = await host({ background: { maxWaitMs: 10_000 } })
    background.summaries.hold = true
    const agent = await agentOf(background)
    expect(await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)).toBe('done')
    // The summary call runs 6 s while the user is away, longer than what is left of maxWaitMs
    // counted from the fold's start once the conversation waits 9 s more.
    await background.clock.advance(6000)
    expect(await turnsUntil(background, agent, () => false)).toBe('blocked')
    expect(totalTokens(background, agent.session)).toBeGreaterThanOrEqual(THRESHOLD)
    const requestsWhenBlocked = background.harness.conversation().length
    await background.clock.advance(9000)
    expect(openFolds(agent.session)).toBe(1)
    expect(background.harness.conversation()).toHaveLength(requestsWhenBlocked)
    background.summaries.held[0]!.release()
    await agent.whenIdle()
    // One fold, swapped in after the wait; no timeout, no synchronous fold.
    expect(startsOf(agent.session).map((start) => start.trigger)).toEqual(['background'])
    const [end] = endsOf(agent.session)
    expect(end).not.toHaveProperty('error')
    expect(end?.timing).toMatchObject({ mode: 'background', statusAtThreshold: 'pending', waitedMs: 9000 })
    expect(end?.timing?.readyAfterMs).toBe(15_000)
    expect(background.harness.summaries()).toHaveLength(1)
    // The request the conversation waited to send is below H: it used the fold.
    expect(lastRequestTokens(background)).toBeLessThan(THRESHOLD)
    expect(background.clock.pending()).toEqual([])
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })

  it('agent.abort() ends the wait at once: the turn ends aborted, nothing is sent, the fold lands later and is swapped in while idle', async () => {
    const background = await host()
    background.summaries.hold = true
    const agent = await agentOf(background)
    expect(await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)).toBe('done')
    expect(await turnsUntil(background, agent, () => false)).toBe('blocked')
    const turn = agent.session.events.findLast((event) => event.type === 'turn/start')?.data as { turn: number }
    const requestsWhenBlocked = background.harness.conversation().length
    agent.abort()
    // Without the clock moving: the 300 s wait must not be sat out.
    let idle = false
    void agent.whenIdle().then(() => (idle = true))
    await until(() => idle, 'the aborted turn ending while it waited at the threshold')
    expect(agent.session.events.findLast((event) => event.type === 'turn/end')?.data).toMatchObject({
      turn: turn.turn,
      reason: 'aborted',
    })
    expect(background.harness.conversation()).toHaveLength(requestsWhenBlocked)
    // The wait's timer is gone, and the fold still runs: an abort ends the turn, not the fold.
    expect(background.clock.pending()).toEqual([])
    expect(openFolds(agent.session)).toBe(1)
    expect(endsOf(agent.session)).toEqual([])
    // Its summary lands while the agent is idle: swapped in then, through the maintenance lock.
    background.summaries.held[0]!.release()
    await background.engine.whenFoldsSettle(agent.session)
    const [end] = endsOf(agent.session)
    expect(end).not.toHaveProperty('error')
    expect(end?.timing).toMatchObject({ mode: 'background', statusAtThreshold: 'pending', waitedMs: 0 })
    expect(totalTokens(background, agent.session)).toBeLessThan(THRESHOLD)
    // The next turn goes on below H, without another fold.
    agent.followup('Go on.')
    await agent.whenIdle()
    expect(startsOf(agent.session)).toHaveLength(1)
    expect(lastRequestTokens(background)).toBeLessThan(THRESHOLD)
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })
})
