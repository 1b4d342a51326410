import type { GenerateOptions } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost } from './background-fold-fixture.ts'
import {
  agentOf,
  backgroundHost,
  conversationRequests,
  endsOf,
  expectEveryMessageKept,
  openFolds,
  replayedRequest,
  startsOf,
  THRESHOLD,
  totalTokens,
  turnsUntil,
} from './background-fold-fixture.ts'
import { SUMMARY } from './engine-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

/** What a summary call costs in the scripted answers: it reads its prompt from the cache and writes a 600-token summary. */
const SUMMARY_USAGE = { inputTokens: 380, cacheReadTokens: 3000, outputTokens: 600 }

describe('Claude Code #70459: a background summary whose verbatim tail went stale', () => {
  it('is discarded as stale (detail and its call on the log), and the fold that replaces it replays an answered request (warm)', async () => {
    // S = 0.5 × H = 3200; the retain budget is 0.16 × 8000 = 1280 tokens.
    const background = await backgroundHost({ background: { startRatio: 0.5 } })
    hosts.push(background)
    background.summaries.hold = true
    const agent = await agentOf(background)
    await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)
    const snapshotTokens = totalTokens(background, agent.session)
    // Right after the snapshot a tool returns a huge result (~2500 tokens, twice the retain
    // budget); the slow summary arrives while that tool call is answered.
    background.results.push(10_000)
    let released = false
    // `llm/stream` listeners are awaited: the request goes out once the summary is in hand.
    background.harness.ctx.on('llm/stream', async (request) => {
      if (request.purpose !== 'conversation' || released) return
      released = true
      background.summaries.hold = false
      background.summaries.held[0]!.release({ content: SUMMARY, usage: SUMMARY_USAGE })
      await background.engine.whenFoldsSettle(agent.session)
    })
    let grown = 0
    background.harness.ctx.on('session/event', (session, event) => {
      if (event.type === 'tool/result' && grown === 0) grown = totalTokens(background, session)
    })
    agent.followup('Dump the whole log file.')
    await agent.whenIdle()
    await background.engine.whenFoldsSettle(agent.session)
    expect(grown - snapshotTokens).toBeGreaterThan(2 * 1280)

    const [stale] = endsOf(agent.session)
    expect(stale).toMatchObject({
      error: expect.stringContaining('background fold discarded (stale): '),
      discarded: {
        reason: 'stale',
        detail: expect.stringMatching(
          /^the request after the swap would be about \d+ tokens, at or above the soft threshold \(3200\): the conversation grew too far past the snapshot/,
        ),
      },
      timing: { mode: 'background' },
      // The discarded call is paid: its usage is on the log.
      attempts: [expect.objectContaining({ reason: 'first', finishReason: 'stop', usage: SUMMARY_USAGE })],
    })
    // Nothing stale was swapped in: no checkpoint kept the huge tail verbatim under a summary of the old head.
    const firstSummary = agent.session.events.find((event) => event.type === 'compaction/summary')
    const staleStart = agent.session.events.find((event) => event.type === 'compaction/start')!
    expect(
      firstSummary === undefined ||
        (firstSummary.data as { compactionId: string }).compactionId !==
          (staleStart.data as { compactionId: string }).compactionId,
    ).toBe(true)

    // Folding goes on until a checkpoint lands; every fold after the stale one is warm: its
    // summary call replays a conversation request that was sent and answered before it.
    await turnsUntil(background, agent, () => agent.session.events.some((event) => event.type === 'compaction/summary'))
    expect(openFolds(agent.session)).toBe(0)
    const summaries = background.harness.summaries()
    expect(summaries.length).toBeGreaterThanOrEqual(2)
    for (const summary of summaries.slice(1)) {
      const replayed: GenerateOptions | undefined = replayedRequest(background, summary)
      expect(replayed, 'a summary call after the stale discard replays a whole answered request').toBeDefined()
      expect(conversationRequests(background).indexOf(replayed!)).toBeLessThan(
        background.harness.requests.indexOf(summary),
      )
    }
    const committed = endsOf(agent.session).filter((end) => end.error === undefined)
    expect(committed).toHaveLength(1)
    expect(totalTokens(background, agent.session)).toBeLessThan(THRESHOLD)
    expect(conversationRequests(background).every((request) => request.messages.length > 0)).toBe(true)
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })
})
