import type { CacheGuardData } from '@warmfold/cache-ledger'
import { cacheTotals } from '@warmfold/cache-ledger'
import { ManualCompactionError } from '@warmfold/compaction'
import type { GenerateOptions } from '@warmfold/llm'
import type { Session, SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { SummaryRequestInput } from '../src/index.ts'
import { BasicCompactionEngine } from '../src/index.ts'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { growUntil, mountEngine, oneToolStepPerTurn, ROUTE, runAgent, stopAfter } from './engine-fixture.ts'

/** A summary call without the tool definitions: not a warm replay (the peer shape `toolless`). */
class ToollessEngine extends BasicCompactionEngine {
  protected override buildSummaryRequest(input: SummaryRequestInput): GenerateOptions {
    const { tools: _tools, ...rest } = super.buildSummaryRequest(input)
    return rest
  }
}

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function mount(options: EngineHarnessOptions): Promise<EngineHarness> {
  const harness = await mountEngine({ conversation: stopAfter(30), ...options })
  harnesses.push(harness)
  return harness
}

function eventsOf<K extends 'compaction/end' | 'compaction/failure' | 'cache/guard'>(
  session: Session,
  type: K,
): Array<SessionEvent<K>['data']> {
  return session.events.filter((event) => event.type === type).map((event) => event.data as SessionEvent<K>['data'])
}

function count(session: Session, type: string): number {
  return session.events.filter((event) => event.type === type).length
}

const TOOLLESS_REASON =
  "the summary call's tool 0 differs from the last conversation request's (tools added, removed, reordered or changed) at character 0"

describe("the cache ledger's summary guard and the engine", () => {
  it("refuse: the engine refuses the compaction with the guard's reason, sends nothing, commits nothing, and the conversation goes on", async () => {
    // On the turn's path (background folds have their own case below).
    const harness = await mount({
      engineClass: ToollessEngine,
      ledger: { guard: 'refuse' },
      engine: { background: { enabled: false } },
    })
    const agent = await runAgent(harness)
    const session = agent.session
    expect(
      session.events
        .filter((event) => event.type === 'turn/end')
        .map((event) => (event.data as { reason: string }).reason),
    ).toEqual(['stop'])
    expect(harness.adapter.requests.filter((request) => request.purpose === 'compaction')).toEqual([])
    expect(count(session, 'compaction/summary')).toBe(0)
    const ends = eventsOf(session, 'compaction/end')
    expect(ends.length).toBeGreaterThan(0)
    for (const end of ends) expect(end.error).toBe(`the cache guard refused the summary call: ${TOOLLESS_REASON}`)
    // One guard event per compaction attempt: a refused call is never retried.
    const guards: CacheGuardData[] = eventsOf(session, 'cache/guard')
    expect(guards).toHaveLength(ends.length)
    expect(guards.every((guard) => guard.action === 'refuse' && guard.reason === TOOLLESS_REASON)).toBe(true)
    const failures = eventsOf(session, 'compaction/failure')
    expect(failures[0]?.reason).toBe(
      `the summary was refused: the cache guard refused the summary call: ${TOOLLESS_REASON}`,
    )
    expect(cacheTotals(session.events)).toMatchObject({
      guardRefusals: ends.length,
      guardWarnings: 0,
      purposes: { conversation: 31 },
    })
    harness.assertClean()
  })

  it('refuse, background: the refused background fold is discarded as refused, backs off for the turn, and the fold at the threshold is refused too', async () => {
    const harness = await mount({ engineClass: ToollessEngine, ledger: { guard: 'refuse' } })
    const agent = await runAgent(harness)
    const session = agent.session
    expect(
      session.events
        .filter((event) => event.type === 'turn/end')
        .map((event) => (event.data as { reason: string }).reason),
    ).toEqual(['stop'])
    expect(harness.adapter.requests.filter((request) => request.purpose === 'compaction')).toEqual([])
    const ends = eventsOf(session, 'compaction/end')
    // One background fold (then the back-off holds for the turn), then the pressure path's attempt.
    expect(ends.map((end) => end.discarded?.reason ?? 'sync')).toEqual(['refused', 'sync'])
    expect(ends[0]?.error).toBe(
      `background fold discarded (refused): the cache guard refused the summary call: ${TOOLLESS_REASON}`,
    )
    expect(ends[0]?.timing).toMatchObject({ mode: 'background', waitedMs: 0 })
    expect(ends[1]?.error).toBe(`the cache guard refused the summary call: ${TOOLLESS_REASON}`)
    expect(eventsOf(session, 'cache/guard')).toHaveLength(2)
    harness.assertClean()
  })

  it("refuse: a manual compaction fails with ManualCompactionError summary and the guard's reason", async () => {
    const harness = await mount({
      engineClass: ToollessEngine,
      ledger: { guard: 'refuse' },
      engine: { auto: false },
      conversation: oneToolStepPerTurn,
    })
    const agent = await harness.ctx.agentLoop.create('manual', { ...ROUTE })
    await growUntil(agent, () => agent.session.surface.nodes.length >= 12)
    const failure = await harness.ctx.compaction.compactNow(agent).catch((error: unknown) => error)
    expect(ManualCompactionError.isInstance(failure)).toBe(true)
    expect(failure).toMatchObject({
      code: 'summary',
      message: `the cache guard refused the summary call: ${TOOLLESS_REASON}`,
    })
    expect(count(agent.session, 'compaction/summary')).toBe(0)
    harness.assertClean()
  })

  it("refuse lets BasicCompactionEngine's warm replays through: every fold commits and no guard event is logged", async () => {
    const harness = await mount({ ledger: { guard: 'refuse' }, conversation: stopAfter(60) })
    const agent = await runAgent(harness)
    expect(count(agent.session, 'compaction/summary')).toBeGreaterThanOrEqual(2)
    expect(count(agent.session, 'cache/guard')).toBe(0)
    const summaryObservations = agent.session.events.filter(
      (event) => event.type === 'cache/observation' && (event.data as { purpose: string }).purpose === 'compaction',
    )
    expect(summaryObservations.map((event) => (event.data as { cause: string }).cause)).toEqual(
      summaryObservations.map(() => 'none'),
    )
    harness.assertClean()
  })

  it('warn: the summary call goes out and commits; each call has its guard warning', async () => {
    const harness = await mount({ engineClass: ToollessEngine, ledger: { guard: 'warn' } })
    const agent = await runAgent(harness)
    const summaries = harness.adapter.requests.filter((request) => request.purpose === 'compaction')
    expect(summaries.length).toBeGreaterThan(0)
    expect(count(agent.session, 'compaction/summary')).toBe(summaries.length)
    expect(eventsOf(agent.session, 'cache/guard').map((guard) => guard.action)).toEqual(summaries.map(() => 'warn'))
    harness.assertClean()
  })

  it('off: no guard event, the compaction commits', async () => {
    const harness = await mount({ engineClass: ToollessEngine, ledger: { guard: 'off' } })
    const agent = await runAgent(harness)
    expect(count(agent.session, 'compaction/summary')).toBeGreaterThan(0)
    expect(count(agent.session, 'cache/guard')).toBe(0)
    harness.assertClean()
  })
})
