import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { balancedCuts, isCheckpointMessage } from '@warmfold/compaction'
import type { AnySessionEvent, Session } from '@warmfold/session'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { afterEach, describe, expect, it } from 'vitest'
import type { BasicCompactionConfig, BasicCompactionEngine } from '../src/index.ts'
import type { EngineHarness } from './engine-fixture.ts'
import { growUntil, mountEngine, oneToolStepPerTurn, ROUTE, SUMMARY } from './engine-fixture.ts'
import { ManualIdleClock } from './manual-idle-clock.ts'

const TTL = 300_000
const MARGIN = 30_000
// Threshold 6400 tokens (window 8000 × 0.8); idle folds from 0.6 × 6400 = 3840.
const IDLE_FROM = 3840
const THRESHOLD = 6400

const harnesses: EngineHarness[] = []
const folders: string[] = []

async function folder(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-idle-'))
  folders.push(directory)
  return directory
}
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

interface Setup {
  idle?: BasicCompactionConfig['idle']
  cacheTtlMs?: number
  summary?: () => ScriptedReply | Promise<ScriptedReply>
  directory?: string
}

/** Grows an agent through real one-step turns until its request is between the idle share and the threshold. */
async function idleUnderPressure(setup: Setup = {}) {
  const clock = new ManualIdleClock()
  const engine = await mountEngine({
    conversation: oneToolStepPerTurn,
    summary: setup.summary,
    cacheTtlMs: 'cacheTtlMs' in setup ? setup.cacheTtlMs : TTL,
    directory: setup.directory,
    engine: { idle: { marginMs: MARGIN, clock, ...setup.idle } },
  })
  harnesses.push(engine)
  const agent = await engine.ctx.agentLoop.create('idle', { ...ROUTE, reasoningEffort: 'max' })
  const tokens = () => engine.ctx.tokenMeter.measure(agent.session).totalTokens
  await growUntil(agent, () => tokens() >= IDLE_FROM + 200)
  expect(tokens()).toBeLessThan(THRESHOLD)
  expect(types(agent.session)).not.toContain('compaction/start')
  return { engine, agent, clock, tokens }
}

function types(session: Session): string[] {
  return session.events.map((event) => event.type)
}

function compactionEvents(session: Session): AnySessionEvent[] {
  return session.events.filter((event) => event.type.startsWith('compaction/'))
}

describe('idle compaction before the cache expires', () => {
  it('fires at TTL − margin after the last request and folds warm, like a pressure fold', async () => {
    const { engine, agent, clock, tokens } = await idleUnderPressure()
    const lastRequest = clock.now()
    expect(clock.pending()).toEqual([lastRequest + TTL - MARGIN])
    const before = tokens()
    await clock.advance(TTL - MARGIN)
    await (engine.ctx.compaction as BasicCompactionEngine).whenFoldsSettle(agent.session)
    const start = agent.session.events.find((event) => event.type === 'compaction/start')
    expect(start?.data).toMatchObject({ turn: null, trigger: 'idle' })
    const end = agent.session.events.filter((event) => event.type === 'compaction/end').at(-1)
    expect(end?.data).not.toHaveProperty('error')
    expect(tokens()).toBeLessThan(before / 2)
    // The summary call replays the conversation's envelope (a warm fold): same system, tools, effort.
    const summary = engine.summaries().at(-1)!
    const conversation = engine.conversation().at(-1)!
    expect(summary.system).toEqual(conversation.system)
    expect(summary.tools).toEqual(conversation.tools)
    expect(summary.reasoningEffort).toBe('max')
    // The head is the whole surface: the summary call replays the last request's messages exactly
    // plus the instruction, the prefix whose cache entry is still warm.
    expect(summary.messages.slice(0, -1)).toEqual(conversation.messages)
    expect(summary.messages).toHaveLength(conversation.messages.length + 1)
    const folded = agent.session.events.find((event) => event.type === 'compaction/summary')?.data as {
      shadowedRange: { start: number; end: number }
    }
    expect(folded.shadowedRange).toEqual({ start: 0, end: conversation.messages.length - 1 })
    // One attempt per request: no new timer after the fold.
    expect(clock.pending()).toEqual([])
    agent.followup('Go on.')
    await agent.whenIdle()
    expect(agent.session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'stop' } })
    engine.assertClean()
  })

  it('fires on real timers too (small TTL the test controls) and the fold is flushed', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-idle-'))
    folders.push(directory)
    // Real time: the timer fires 100 ms after the last request (TTL 5 s − margin 4.9 s).
    const engine = await mountEngine({
      conversation: oneToolStepPerTurn,
      cacheTtlMs: 5000,
      directory,
      engine: { idle: { marginMs: 4900 } },
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('real', { ...ROUTE })
    const folded = new Promise<AnySessionEvent>((resolve) => {
      engine.ctx.on('session/event', (_session, event) => {
        if (event.type === 'compaction/end') resolve(event)
      })
    })
    await growUntil(agent, () => engine.ctx.tokenMeter.measure(agent.session).totalTokens >= IDLE_FROM + 200)
    const end = await folded
    expect(end.data).not.toHaveProperty('error')
    await agent.whenIdle()
    expect(agent.session.events.find((event) => event.type === 'compaction/start')?.data).toMatchObject({
      trigger: 'idle',
    })
    // The fold is durable: the store flushed it (the file replays with the checkpoint).
    await engine.ctx.sessions.close(agent.session)
    const reopened = await engine.ctx.sessions.open('real')
    expect(reopened.events.some((event) => event.type === 'compaction/summary')).toBe(true)
    engine.assertClean()
  })

  it('is not thrown away by user input mid-summary: the turn runs beside it and the summary is swapped in at its next step', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let started!: () => void
    const inFlight = new Promise<void>((resolve) => (started = resolve))
    const { engine, agent, clock } = await idleUnderPressure({
      summary: async () => {
        started()
        await gate
        return { content: SUMMARY }
      },
    })
    // The idle fold summarizes the last sent request: every message it held.
    const lastRequest = engine.conversation().at(-1)!
    await clock.advance(TTL)
    await inFlight
    // The user comes back while the idle fold's summary call runs: the turn starts at once.
    const turn = agent.followup('I am back: add a test for the loader.')
    while (
      !agent.session.events.some(
        (event) => event.type === 'user/message' && JSON.stringify(event.data).includes('I am back'),
      )
    )
      await new Promise((resolve) => setTimeout(resolve, 1))
    release()
    expect(await turn).toMatchObject({ reason: 'stop' })
    const summary = agent.session.events.find((event) => event.type === 'compaction/summary')
    expect(summary?.data).toMatchObject({ shadowedRange: { start: 0, end: lastRequest.messages.length - 1 } })
    const end = agent.session.events.find((event) => event.type === 'compaction/end')?.data as {
      error?: string
      timing?: { mode: string }
    }
    expect(end.error).toBeUndefined()
    expect(end.timing?.mode).toBe('background')
    // Every message after the snapshot stayed, in order, after the checkpoint: the answer to the
    // last request, then the user's message and the turn it started.
    const messages = agent.session.deriveMessages()
    expect(isCheckpointMessage(messages[0]!)).toBe(true)
    expect(messages[1]?.role).toBe('assistant')
    expect(JSON.stringify(messages[2])).toContain('I am back')
    engine.assertClean()
  })

  it('is cleared by new input before it fires', async () => {
    const { engine, agent, clock } = await idleUnderPressure()
    expect(clock.pending()).toHaveLength(1)
    agent.followup('One more thing.')
    expect(clock.pending()).toEqual([])
    await agent.whenIdle()
    engine.assertClean()
  })

  it('is cleared when the session is closed', async () => {
    const { engine, agent, clock } = await idleUnderPressure()
    expect(clock.pending()).toHaveLength(1)
    await engine.ctx.sessions.close(agent.session)
    expect(clock.pending()).toEqual([])
    await clock.advance(TTL)
    expect(compactionEvents(agent.session)).toEqual([])
    engine.assertClean()
  })

  it('is cleared when the engine plugin is disposed', async () => {
    const { engine, agent, clock } = await idleUnderPressure()
    expect(clock.pending()).toHaveLength(1)
    engine.engineScope.dispose()
    expect(clock.pending()).toEqual([])
    await clock.advance(TTL)
    expect(compactionEvents(agent.session)).toEqual([])
    engine.assertClean()
  })

  it('is cleared when the context stops', async () => {
    const { engine, agent, clock } = await idleUnderPressure()
    expect(clock.pending()).toHaveLength(1)
    await engine.ctx.stop()
    expect(clock.pending()).toEqual([])
    await clock.advance(TTL)
    expect(compactionEvents(agent.session)).toEqual([])
  })

  it('never fires a stale timer after the session is resumed', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-idle-'))
    folders.push(directory)
    const { engine, agent, clock } = await idleUnderPressure({ directory })
    expect(clock.pending()).toHaveLength(1)
    // A second agent on the held session (a resume in the same process) drops the first one's timer.
    const again = await engine.ctx.agentLoop.create('idle', { ...ROUTE, reasoningEffort: 'max' })
    expect(clock.pending()).toEqual([])
    await clock.advance(TTL)
    expect(compactionEvents(again.session)).toEqual([])
    // Closed and reopened from its file: the resumed agent has sent nothing, so nothing is armed.
    await engine.ctx.sessions.close(agent.session)
    const resumed = await engine.ctx.agentLoop.create('idle', { ...ROUTE, reasoningEffort: 'max' })
    expect(resumed.session).not.toBe(agent.session)
    await clock.advance(TTL)
    expect(clock.pending()).toEqual([])
    expect(compactionEvents(resumed.session)).toEqual([])
    engine.assertClean()
  })

  it('a timer that fires after the TTL ran out (a suspended machine) makes no cold fold, and logs why', async () => {
    const { engine, agent, clock } = await idleUnderPressure({ directory: await folder() })
    const due = clock.pending()[0]!
    // The machine sleeps through the fold's moment and wakes 10 minutes after the TTL ran out.
    clock.suspend(TTL + 600_000)
    await clock.advance(0)
    expect(clock.now()).toBeGreaterThan(due)
    expect(engine.summaries()).toEqual([])
    const failure = agent.session.events.find((event) => event.type === 'compaction/failure')
    expect(failure?.data).toMatchObject({ trigger: 'idle', thresholdTokens: THRESHOLD })
    expect((failure!.data as { reason: string }).reason).toBe(
      "the idle fold's timer fired 600 s after the cache TTL ran out (a suspended machine, a clock jump or a stalled event loop); a fold now would be prefilled in full, so none was made",
    )
    // Flushed: the reason survives the process.
    await engine.ctx.sessions.close(agent.session)
    const reopened = await engine.ctx.sessions.open('idle')
    expect(reopened.events.some((event) => event.type === 'compaction/failure')).toBe(true)
    engine.assertClean()
  })

  it('a pending timer whose pressure fell below minPressure meanwhile makes no fold, though a head is left to fold', async () => {
    const { engine, agent, clock, tokens } = await idleUnderPressure()
    expect(clock.pending()).toHaveLength(1)
    // The host folds the older two thirds by hand: the request drops below the idle share, and
    // the newer third is still there for a fold to take.
    const cuts = balancedCuts(agent.session.deriveMessages())
    const end =
      cuts.findLastIndex(
        (cut, position) => cut && position <= Math.floor((agent.session.surface.nodes.length * 2) / 3),
      ) - 1
    await engine.ctx.compaction.compactRegion(0, end, agent)
    expect(tokens()).toBeLessThan(IDLE_FROM)
    expect(engine.summaries()).toHaveLength(1)
    await clock.advance(TTL)
    expect(engine.summaries()).toHaveLength(1)
    expect(agent.session.events.filter((event) => event.type === 'compaction/start')).toHaveLength(1)
    engine.assertClean()
  })

  it('arms nothing below minPressure, without a cache TTL, or when disabled', async () => {
    const low = await idleUnderPressure({ idle: { minPressure: 0.9 } })
    expect(low.clock.pending()).toEqual([])
    const noTtl = await idleUnderPressure({ cacheTtlMs: undefined })
    expect(noTtl.clock.pending()).toEqual([])
    const off = await idleUnderPressure({ idle: { enabled: false } })
    expect(off.clock.pending()).toEqual([])
    for (const { engine } of [low, noTtl, off]) engine.assertClean()
  })

  it('rejects a bad idle config naming the key', async () => {
    const { parseCompactionConfig } = await import('../src/engine-parts.ts')
    expect(() => parseCompactionConfig({ idle: { minPressure: 2 } })).toThrow(/minPressure/)
    expect(() => parseCompactionConfig({ idle: { clock: { now: () => 0 } } })).toThrow(/idle\.clock/)
    expect(SUMMARY).toBeTruthy()
  })
})
