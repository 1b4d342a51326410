import type { CacheObservationData } from '@warmfold/cache-ledger'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost } from './background-fold-fixture.ts'
import { agentOf, backgroundHost, endsOf, startsOf, turnsUntil } from './background-fold-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

describe("a background fold's logged re-prefill figure", () => {
  it('postSwapPrefillTokens is what the request after the swap prefills, as the ledger sees it: every message at the swap', async () => {
    const background = await backgroundHost({ ledger: {} })
    hosts.push(background)
    background.summaries.hold = true
    const agent = await agentOf(background)
    expect(await turnsUntil(background, agent, () => false)).toBe('blocked')
    background.summaries.held[0]!.release()
    await agent.whenIdle()
    const session = agent.session
    expect(startsOf(session)).toHaveLength(1)
    const [end] = endsOf(session)
    expect(end).not.toHaveProperty('error')
    const endSeq = session.events.findIndex((event) => event.type === 'compaction/end')
    // The ledger: the first conversation request after the swap departs at message 0 (the checkpoint), so
    // everything but the system prompt and tools is prefilled again.
    const next = session.events
      .slice(endSeq)
      .find((event) => event.type === 'cache/observation' && event.data.purpose === 'conversation')
    expect(next?.data as CacheObservationData).toMatchObject({
      cause: 'fold',
      divergence: { part: 'message', index: 0 },
    })
    // The figure logged at the swap: the meter's tokens of every surface node that was there then
    // (checkpoint, carried and retained messages), none of the system prompt and tools.
    const atSwap = background.harness.ctx.tokenMeter
      .measure(session)
      .nodes.filter((node) => node.seq < endSeq)
      .reduce((sum, node) => sum + node.tokens, 0)
    expect(atSwap).toBeGreaterThan(0)
    expect(end?.timing?.postSwapPrefillTokens).toBe(atSwap)
    background.harness.assertClean()
  })
})
