import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LlmError } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost, BackgroundHostOptions, CompactionEndData } from './background-fold-fixture.ts'
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
const folders: string[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

/** A host whose first background fold is in flight (its summary call held) between turns, below H. */
async function foldInFlight(options: BackgroundHostOptions = {}) {
  const background = await backgroundHost({ background: { startRatio: 0.5 }, ...options })
  hosts.push(background)
  background.summaries.hold = true
  const agent = await agentOf(background)
  await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)
  expect(openFolds(agent.session)).toBe(1)
  expect(background.summaries.held).toHaveLength(1)
  return { background, agent }
}

/** Every discarded fold's `compaction/end`: the error, the reason, the timing and its calls. */
function expectDiscarded(end: CompactionEndData | undefined, reason: string, detail: RegExp): void {
  expect(end).toMatchObject({
    error: expect.stringContaining(`background fold discarded (${reason}): `),
    discarded: { reason, detail: expect.stringMatching(detail) },
  })
  expect(end?.timing).toMatchObject({ mode: 'background', statusAtThreshold: 'none', waitedMs: 0 })
  expect(end?.attempts?.length).toBeGreaterThan(0)
}

async function settled(background: BackgroundHost, session: Session): Promise<void> {
  await until(() => openFolds(session) === 0, 'the discarded fold closing its bracket')
  await background.engine.whenFoldsSettle(session)
}

describe('a background fold in flight is discarded, its bracket closed with its calls, when', () => {
  it('a prune rewrites a node of the snapshot (region-changed), and the next boundary arms a fresh fold', async () => {
    const { background, agent } = await foldInFlight({
      pruner: { thresholdChars: 1000, headChars: 100, tailChars: 100 },
    })
    const pruner = (
      background.harness.ctx as unknown as { toolResultPruner: { pruneSession(session: Session): unknown } }
    ).toolResultPruner
    pruner.pruneSession(agent.session)
    await settled(background, agent.session)
    const [end] = endsOf(agent.session)
    expectDiscarded(
      end,
      'region-changed',
      /^a compaction\/prune|^a tool\/result at seq \d+ rewrote seq [\d, ]+ of the snapshot$/,
    )
    expect(end?.attempts?.map((attempt) => attempt.finishReason)).toEqual(['aborted'])
    background.summaries.hold = false
    await turnsUntil(background, agent, () => agent.session.events.some((event) => event.type === 'compaction/summary'))
    expect(startsOf(agent.session).map((start) => start.trigger)).toEqual(['background', 'background'])
    background.harness.assertClean()
  })

  it('the tools change (route-changed)', async () => {
    const { background, agent } = await foldInFlight()
    background.harness.ctx.tools.register({
      name: 'grep',
      description: 'Search files',
      parameters: { type: 'object' },
      execute: () => 'no match',
    })
    background.summaries.hold = false
    agent.followup('Search for the bug.')
    await agent.whenIdle()
    await settled(background, agent.session)
    expectDiscarded(
      endsOf(agent.session)[0],
      'route-changed',
      /^a request\/header at seq \d+ changed the route or envelope since the snapshot$/,
    )
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })

  it('a new agent takes the session (resumed)', async () => {
    const { background, agent } = await foldInFlight()
    const next = await agentOf(background)
    expect(next.session).toBe(agent.session)
    await settled(background, agent.session)
    const ends = endsOf(agent.session)
    // One end for the one bracket.
    expect(ends).toHaveLength(1)
    expectDiscarded(ends[0], 'resumed', /^a new agent took session background before the fold was swapped in$/)
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })

  it('the session is closed (closed): the end is written before the store releases it, in memory and on disk', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-background-close-'))
    folders.push(directory)
    const { background, agent } = await foldInFlight({ directory })
    await background.harness.ctx.sessions.close(agent.session)
    await background.engine.whenFoldsSettle(agent.session)
    const ends = endsOf(agent.session)
    expect(ends).toHaveLength(1)
    expect(ends[0]?.attempts).toEqual([expect.objectContaining({ reason: 'first', finishReason: 'aborted' })])
    expectDiscarded(ends[0], 'closed', /^session background was closed before the fold was swapped in$/)
    const lines = (await readFile(join(directory, 'background.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; data: unknown })
    expect(lines.filter((line) => line.type === 'compaction/end').map((line) => line.data)).toEqual(ends)
    background.harness.assertClean()
  })

  it('its summary call fails (failed), with the call on compaction/end.attempts; a new fold arms from the next turn on', async () => {
    const { background, agent } = await foldInFlight()
    background.summaries.held[0]!.release({
      error: new LlmError('STREAM_INCOMPLETE', 'upstream reset the stream', { retryable: false }),
    })
    await settled(background, agent.session)
    const [end] = endsOf(agent.session)
    expectDiscarded(end, 'failed', /summary call failed \(STREAM_INCOMPLETE\): upstream reset the stream/)
    expect(end?.attempts).toEqual([
      expect.objectContaining({ reason: 'first', finishReason: 'error', maxTokens: 1000 }),
    ])
    // It backs off for the rest of its turn; the next turn's boundary arms a new one, which lands.
    background.summaries.hold = false
    await turnsUntil(background, agent, () => agent.session.events.some((event) => event.type === 'compaction/summary'))
    const starts = agent.session.events
      .filter((event) => event.type === 'compaction/start')
      .map((event) => event.data as { trigger: string; turn: number })
    expect(starts.map((start) => start.trigger)).toEqual(['background', 'background'])
    expect(starts[1]!.turn).toBeGreaterThan(starts[0]!.turn)
    expectEveryMessageKept(agent.session)
    background.harness.assertClean()
  })
})
