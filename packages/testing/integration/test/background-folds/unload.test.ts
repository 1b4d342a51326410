import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentHandle, TurnResult } from '@warmfold/agent-loop'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext, recordCordisPrints } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { ConversationMode, RecordingClock } from './stalling-host.ts'
import {
  AGENT_OPTIONS,
  DEFAULT_MAX_WAIT_MS,
  eventsOnDisk,
  foldBrackets,
  mountStallingHost,
  SESSION_ID,
  StallingServer,
} from './stalling-host.ts'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup()
})

/** Polls (yielding to timers and I/O) until `condition` holds; fails naming `what` after `limit` polls. */
async function until(condition: () => boolean, what: string, limit = 20_000): Promise<void> {
  for (let poll = 0; !condition(); poll++) {
    if (poll >= limit) throw new Error(`until: ${what} did not happen after ${limit} polls`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** Resolves once the server has seen `promise` settle (polling, so a bug fails the test instead of hanging it). */
async function settles(promise: Promise<unknown>, what: string): Promise<void> {
  let settled = false
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  )
  await until(() => settled, what)
}

/** Lets late work (a summary call's rejection, a swap, a flush) run before the test looks again. */
const lateWork = () => new Promise((resolve) => setTimeout(resolve, 50))

interface Stalled {
  readonly server: StallingServer
  readonly context: TestContext
  readonly directory: string
  readonly engine: { dispose(): unknown }
  readonly clock: RecordingClock
  readonly agent: AgentHandle
  /** The first turn's result. */
  readonly turn: Promise<TurnResult>
  /** Index of the stalled summary request on the server. */
  readonly summary: number
}

/**
 * A real host whose background fold's summary call stalls on the server (the request reached
 * it). `until-summary`: the turn has ended, the agent is idle, the fold in flight. `tools`: the
 * turn ran on to the pressure threshold and waits there for the fold (`background.maxWaitMs`,
 * 300 s by default).
 */
async function stalled(mode: ConversationMode): Promise<Stalled> {
  const server = await StallingServer.start(mode)
  cleanups.push(() => server.close())
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-unload-'))
  cleanups.push(() => rm(directory, { recursive: true, force: true }))
  const context = await createTestContext()
  cleanups.push(() => context.dispose())
  const { engine, clock } = mountStallingHost(context.ctx, { baseURL: server.baseURL, directory })
  await context.ctx.events.flush()
  const agent = await context.ctx.agentLoop.create(SESSION_ID, AGENT_OPTIONS)
  const turn = agent.followup('Read the project.')
  await until(() => server.summaryIndex() >= 0, 'the summary request reaching the server')
  if (mode === 'until-summary') expect(await turn).toMatchObject({ reason: 'stop' })
  // The engine waits at the threshold through one timer of exactly maxWaitMs.
  else await until(() => clock.timers.includes(DEFAULT_MAX_WAIT_MS), 'the turn waiting at the pressure threshold')
  const brackets = foldBrackets(agent.session.events)
  expect(brackets.map((bracket) => [bracket.trigger, bracket.end])).toEqual([['background', undefined]])
  context.assertClean()
  return { server, context, directory, engine, clock, agent, turn, summary: server.summaryIndex() }
}

/** The stalled fold's bracket on disk is closed as `reason`, and no checkpoint is anywhere in the file. */
function expectDiscardedOnDisk(directory: string, reason: string): void {
  const events = eventsOnDisk(directory)
  expect(foldBrackets(events)).toEqual([
    expect.objectContaining({
      trigger: 'background',
      end: expect.objectContaining({
        discarded: expect.objectContaining({ reason }),
        attempts: [expect.objectContaining({ finishReason: 'aborted' })],
      }),
    }),
  ])
  expect(events.filter((event) => event.type === 'compaction/summary')).toEqual([])
}

describe('unloading during a background fold (real HTTP, a summary call that stalls)', { timeout: 60_000 }, () => {
  it('ctx.stop() with the agent idle: the summary request is aborted, the bracket closed on disk, nothing committed, nothing reported', async () => {
    const { server, context, directory, agent, summary } = await stalled('until-summary')
    expect(agent.status).toBe('idle')
    const { printed } = await recordCordisPrints(async () => {
      await context.ctx.stop()
      await settles(server.server.closed(summary), 'the server seeing the stalled summary request closed')
      await lateWork()
    })
    // The store closed the session first (it is mounted first), so the fold was discarded as `closed`.
    expectDiscardedOnDisk(directory, 'closed')
    expect(server.server.openResponses).toBe(0)
    expect(printed).toEqual([])
  })

  it('ctx.stop() while a turn waits at the pressure threshold: the turn ends aborted, the request is aborted, the bracket closed on disk', async () => {
    const { server, context, directory, turn, summary } = await stalled('tools')
    const requests = server.server.requests.length
    const { printed } = await recordCordisPrints(async () => {
      await context.ctx.stop()
      await settles(turn, 'the waiting turn ending')
      await settles(server.server.closed(summary), 'the server seeing the stalled summary request closed')
      await lateWork()
    })
    expect(await turn).toMatchObject({ reason: 'aborted' })
    expect(server.server.requests).toHaveLength(requests)
    expectDiscardedOnDisk(directory, 'closed')
    // The store was unloaded before the loop: the turn's end cannot be logged (a resume logs it as
    // interrupted), and the loop says so. Nothing else is reported.
    expect(printed).toEqual([
      expect.stringMatching(/logging the end \(aborted\) of turn 1 failed: session stalling is closed/),
    ])
  })

  it('disposing the engine alone: the request is aborted, the bracket closed (unloaded) and flushed, nothing committed later', async () => {
    const { server, context, directory, agent, engine, summary } = await stalled('until-summary')
    engine.dispose()
    await settles(server.server.closed(summary), 'the server seeing the stalled summary request closed')
    // Flushed by the unload: on disk before any other write.
    expectDiscardedOnDisk(directory, 'unloaded')
    await lateWork()
    // The conversation goes on without the engine; nothing of the fold is committed meanwhile.
    await agent.followup('One more thing.')
    expectDiscardedOnDisk(directory, 'unloaded')
    expect(eventsOnDisk(directory).at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'stop' } })
    expect(server.summaries()).toHaveLength(1)
    context.assertClean()
  })

  it('disposing the engine while a turn waits at the threshold: the wait ends and the turn goes on without it', async () => {
    const { server, context, directory, engine, turn, summary } = await stalled('tools')
    server.mode = 'until-summary'
    engine.dispose()
    await settles(turn, 'the waiting turn going on')
    expect(await turn).toMatchObject({ reason: 'stop' })
    await settles(server.server.closed(summary), 'the server seeing the stalled summary request closed')
    expectDiscardedOnDisk(directory, 'unloaded')
    // No synchronous fold replaced the discarded one: the engine was gone.
    expect(server.summaries()).toHaveLength(1)
    context.assertClean()
  })
})
