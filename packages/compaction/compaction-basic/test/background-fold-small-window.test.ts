import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost } from './background-fold-fixture.ts'
import { agentOf, backgroundHost, endsOf, expectEveryMessageKept, startsOf } from './background-fold-fixture.ts'
import { stopAfter } from './engine-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

/** Tool steps of the session: one agent turn of this many reads. */
const STEPS = 36

/**
 * Characters of each tool result: two ordinary reads (about 300 tokens), then a large one (about
 * 3,000 tokens, twice the retain budget of the fixture's 8,000-token window): the uneven steps of a
 * real agent at a small window, where one result is a large share of the window.
 */
function resultChars(step: number): number {
  return step % 3 === 2 ? 12_000 : 1200
}

/** Every summary call of `session`: those on a committed fold and those of a discarded or failed one. */
function summaryCalls(session: Session): number {
  return session.events.reduce((sum, event) => {
    const data = event.data as { attempts?: unknown[]; error?: string }
    if (event.type === 'compaction/summary') return sum + (data.attempts?.length ?? 0)
    if (event.type === 'compaction/end' && data.error !== undefined) return sum + (data.attempts?.length ?? 0)
    return sum
  }, 0)
}

/**
 * One session of {@link STEPS} reads at the fixture's 8,000-token window, with background folds on
 * (the adaptive S) or off. Each conversation request takes 15 s on the engine's clock, and a background
 * summary call answers after two more conversation requests (about two steps), so the engine learns a
 * real pace.
 */
async function run(background: boolean): Promise<{ host: BackgroundHost; session: Session }> {
  const host = await backgroundHost({
    background: { enabled: background, startRatio: 'adaptive' },
    conversation: stopAfter(STEPS),
  })
  hosts.push(host)
  const { clock, summaries } = host
  summaries.hold = true
  const waiting = new Map<object, number>()
  host.harness.ctx.on('llm/stream', (request) => {
    if (request.purpose !== 'conversation') return
    clock.suspend(15_000)
    for (const held of summaries.held) waiting.set(held, (waiting.get(held) ?? 0) + 1)
    for (const held of summaries.held.filter((call) => (waiting.get(call) ?? 0) > 2)) {
      summaries.held.splice(summaries.held.indexOf(held), 1)
      held.release()
    }
  })
  for (let step = 0; step < STEPS; step++) host.results.push(resultChars(step))
  const agent = await agentOf(host)
  agent.followup('Read the modules one by one.')
  await agent.whenIdle()
  for (const held of summaries.held.splice(0)) held.release()
  await host.engine.whenFoldsSettle(agent.session)
  return { host, session: agent.session }
}

describe('background folds at a small window, where one tool result is a large share of it', () => {
  it('start no fold that the swap would discard as stale, and make no more summary calls than folding synchronously', async () => {
    const synchronous = await run(false)
    const background = await run(true)
    const { session } = background
    const sync = summaryCalls(synchronous.session)
    expect(sync).toBeGreaterThanOrEqual(4)
    // No background fold was started that its swap then found stale: the engine knew before the call.
    const stale = endsOf(session).filter((end) => end.discarded?.reason === 'stale')
    expect(stale.map((end) => end.discarded?.detail)).toEqual([])
    expect(summaryCalls(session)).toBeLessThanOrEqual(sync)
    // Every summary call the session made is on its log (its cost counted).
    expect(summaryCalls(session)).toBe(background.host.harness.summaries().length)
    expect(startsOf(session).length).toBeGreaterThan(0)
    for (const { session: each, host } of [synchronous, background]) {
      expect(endsOf(each).filter((end) => end.error === undefined).length).toBeGreaterThanOrEqual(4)
      expectEveryMessageKept(each)
      host.harness.assertClean()
    }
  })
})
