import { afterEach, describe, expect, it } from 'vitest'
import { SessionCompactionState } from '../src/session-compaction-state.ts'
import type { BackgroundHost } from './background-fold-fixture.ts'
import {
  agentOf,
  backgroundHost,
  endsOf,
  expectEveryMessageKept,
  openFolds,
  THRESHOLD,
  totalTokens,
  until,
} from './background-fold-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

describe('a session whose background folds go stale', () => {
  it('learns from the first stale discard: the same surprise does not make another background fold stale', async () => {
    // S = 0.5 × H = 3200 tokens.
    const host = await backgroundHost({ background: { startRatio: 0.5 } })
    hosts.push(host)
    const { clock, summaries } = host
    const agent = await agentOf(host)
    const session = agent.session
    const pending = () => SessionCompactionState.of(session).background?.status === 'pending'
    /** One user turn whose tool returns `chars` characters; a held fold the turn waits for at H answers. */
    const turn = async (chars: number) => {
      host.results.push(chars)
      agent.followup('Go on.')
      let idle = false
      void agent.whenIdle().then(() => (idle = true))
      await until(() => idle || clock.pending().length > 0, 'the turn ending or waiting at H')
      if (idle) return
      for (const held of summaries.held.splice(0)) held.release()
      await agent.whenIdle()
    }
    let spikes = 0
    for (let step = 0; step < 90 && spikes < 3; step++) {
      // The summaries of background folds are slow; while one is written, a tool returns a huge result.
      summaries.hold = true
      if (!pending()) {
        await turn(1200)
        continue
      }
      await turn(10_000)
      spikes++
      for (const held of summaries.held.splice(0)) held.release()
      await host.engine.whenFoldsSettle(session)
      await turn(1200)
    }
    for (const held of summaries.held.splice(0)) held.release()
    await host.engine.whenFoldsSettle(session)
    // The first spike made its fold stale (nobody could know); the engine then expects it, and starts no
    // background fold that it would make stale again. The session keeps folding (on the turn's path).
    expect(spikes).toBeGreaterThanOrEqual(1)
    const stale = endsOf(session).filter((end) => end.discarded?.reason === 'stale')
    expect(stale).toHaveLength(1)
    expect(endsOf(session).filter((end) => end.error === undefined).length).toBeGreaterThanOrEqual(2)
    expect(totalTokens(host, session)).toBeLessThan(THRESHOLD)
    expect(openFolds(session)).toBe(0)
    expectEveryMessageKept(session)
    host.harness.assertClean()
  })
})
