import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isCheckpointMessage } from '@warmfold/compaction'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost, BackgroundHostOptions } from './background-fold-fixture.ts'
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

describe('a background fold arms', () => {
  it('at the first request boundary at or above S (startRatio × H), never below it', async () => {
    const background = await host({ background: { startRatio: 0.5 } })
    const soft = Math.floor(0.5 * THRESHOLD)
    const agent = await agentOf(background)
    await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)
    const { timeline } = background
    const start = timeline.findIndex((entry) => entry.kind === 'start')
    expect(timeline[start]).toMatchObject({ kind: 'start', trigger: 'background' })
    // Every boundary before the start was below S; the request of the boundary that armed it is at or above S.
    const before = timeline.slice(0, start).flatMap((entry) => (entry.kind === 'request' ? [entry.totalTokens] : []))
    expect(before.length).toBeGreaterThan(4)
    for (const tokens of before) expect(tokens).toBeLessThan(soft)
    const armedAt = timeline[start + 1]
    expect(armedAt?.kind === 'request' && armedAt.totalTokens).toBeGreaterThanOrEqual(soft)
    expect(armedAt?.kind === 'request' && armedAt.totalTokens).toBeLessThan(THRESHOLD)
    background.harness.assertClean()
  })

  it("only after the last conversation request's response finished: its summary call replays that answered request", async () => {
    const background = await host({ background: { startRatio: 0.5 } })
    const finished: number[] = []
    background.harness.ctx.on('llm/finish', (request) => {
      if (request.purpose === 'conversation') finished.push(background.timeline.length)
    })
    const agent = await agentOf(background)
    await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)
    const start = background.timeline.findIndex((entry) => entry.kind === 'start')
    const summary = background.harness.summaries()[0]!
    const replayed = replayedRequest(background, summary)!
    expect(replayed).toBeDefined()
    // The replayed request is the last one sent before the start, and its response had finished by then.
    const index = background.timeline.findIndex((entry) => entry.kind === 'request' && entry.request === replayed)
    expect(background.timeline.slice(index + 1, start).some((entry) => entry.kind === 'request')).toBe(false)
    expect(finished.some((at) => at > index && at <= start)).toBe(true)
    // Its messages come first, unchanged, then the instruction alone.
    expect(summary.messages.slice(0, replayed.messages.length)).toEqual(replayed.messages)
    expect(summary.messages).toHaveLength(replayed.messages.length + 1)
    background.harness.assertClean()
  })

  it('not at the first boundary of a new process above S (no request answered there yet), but at the next one, replaying that answered request', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-background-arm-'))
    try {
      const first = await host({ directory, background: { startRatio: 0.9 } })
      const before = await agentOf(first)
      await turnsUntil(
        first,
        before,
        () => first.harness.ctx.tokenMeter.measure(before.session).totalTokens >= 0.6 * THRESHOLD,
      )
      expect(startsOf(before.session)).toEqual([])
      await first.harness.ctx.sessions.flush(before.session)
      hosts.splice(hosts.indexOf(first), 1)
      await first.harness.dispose()
      // A new process at S = 0.5 × H: the session is above S from its first boundary on.
      const second = await host({ directory, background: { startRatio: 0.5 } })
      const agent = await agentOf(second)
      await turnsUntil(second, agent, () => startsOf(agent.session).length > 0)
      const kinds = second.timeline.map((entry) => entry.kind)
      expect(kinds.slice(0, 3)).toEqual(['request', 'start', 'request'])
      const [firstRequest] = conversationRequests(second)
      expect(second.timeline[0]).toMatchObject({ totalTokens: expect.any(Number) })
      expect((second.timeline[0] as { totalTokens: number }).totalTokens).toBeGreaterThanOrEqual(0.5 * THRESHOLD)
      expect(replayedRequest(second, second.harness.summaries()[0]!)).toBe(firstRequest)
      second.harness.assertClean()
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('one fold per session at a time: a slow summary spans several boundaries above S and no second fold starts', async () => {
    const background = await host({ background: { startRatio: 0.5 } })
    background.summaries.hold = true
    const agent = await agentOf(background)
    await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)
    const armedAt = background.timeline.length
    // Three more turns (six boundaries above S) while the summary is written.
    let boundaries = 0
    for (let turn = 0; turn < 3; turn++) {
      expect(await turnsUntil(background, agent, () => false, 1).catch(() => 'done')).toBe('done')
      boundaries = background.timeline.slice(armedAt).filter((entry) => entry.kind === 'request').length
    }
    expect(boundaries).toBe(6)
    expect(startsOf(agent.session)).toHaveLength(1)
    expect(openFolds(agent.session)).toBe(1)
    expect(background.summaries.held).toHaveLength(1)
    background.summaries.hold = false
    background.summaries.held[0]!.release()
    await turnsUntil(
      background,
      agent,
      () =>
        startsOf(agent.session).length > 0 &&
        openFolds(agent.session) === 0 &&
        agent.session.events.some((event) => event.type === 'compaction/summary'),
    )
    expect(endsOf(agent.session)[0]).not.toHaveProperty('error')
    background.harness.assertClean()
  })
})

describe('the swap', () => {
  it('keeps every message after the region verbatim and in order, including those appended after the snapshot', async () => {
    const background = await host({ background: { startRatio: 0.5 } })
    background.summaries.hold = true
    const agent = await agentOf(background)
    await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)
    const startSeq = startsOf(agent.session)[0]!.seq
    // Two turns go on beside the summary call (appended after the snapshot), then it arrives.
    for (let turn = 0; turn < 2; turn++) {
      agent.followup(`While the summary is written (${turn}).`)
      await agent.whenIdle()
    }
    const beforeSwap = agent.session.deriveMessages()
    background.summaries.hold = false
    background.summaries.held[0]!.release()
    await background.engine.whenFoldsSettle(agent.session)
    const summary = agent.session.events.find((event) => event.type === 'compaction/summary')
    expect(summary).toBeDefined()
    const { shadowedRange, carriedSeqs = [] } = summary!.data as {
      shadowedRange: { start: number; end: number }
      carriedSeqs?: number[]
    }
    const after = agent.session.deriveMessages()
    expect(isCheckpointMessage(after[shadowedRange.start]!)).toBe(true)
    // Everything after the region, byte for byte and in order, follows the checkpoint and its carried messages.
    const tail = beforeSwap.slice(shadowedRange.end + 1)
    expect(after.slice(shadowedRange.start + 1 + carriedSeqs.length)).toEqual(tail)
    const appendedAfterSnapshot = agent.session.events.filter(
      (event) => event.seq > startSeq && event.surface?.op === 'append' && event.seq < summary!.seq,
    )
    expect(appendedAfterSnapshot.length).toBeGreaterThanOrEqual(6)
    expectEveryMessageKept(agent.session)
    expect(endsOf(agent.session).at(-1)).toMatchObject({
      timing: { mode: 'background', statusAtThreshold: 'none', waitedMs: 0 },
    })
    background.harness.assertClean()
  })
})
