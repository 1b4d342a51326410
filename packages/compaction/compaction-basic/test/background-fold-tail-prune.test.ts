import type { Message } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { SessionCompactionState } from '../src/session-compaction-state.ts'
import type { BackgroundHost } from './background-fold-fixture.ts'
import { agentOf, backgroundHost, endsOf, openFolds, startsOf, turnsUntil, until } from './background-fold-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

/** Every tool result is over the pruner's 2,000-character budget: any of them can be pruned. */
const RESULT_CHARS = 2400

/** A host with the pruner mounted, a fold in flight (its summary held) and where its region and snapshot end. */
async function foldInFlight() {
  const host = await backgroundHost({
    background: { startRatio: 0.5 },
    pruner: { thresholdChars: 2000, headChars: 1000, tailChars: 200 },
  })
  hosts.push(host)
  for (let step = 0; step < 40; step++) host.results.push(RESULT_CHARS)
  host.summaries.hold = true
  const agent = await agentOf(host)
  const session = agent.session
  await turnsUntil(host, agent, () => startsOf(session).length > 0)
  const fold = SessionCompactionState.of(session).background!
  expect(fold.status).toBe('pending')
  return { host, agent, session, fold, region: fold.input.transaction.region }
}

/** Seqs of the `tool/result` nodes on the surface at positions after `end`. */
function resultsAfter(session: Session, end: number): number[] {
  return session.surface.nodes.filter((seq, position) => position > end && session.eventAt(seq)?.type === 'tool/result')
}

describe('a prune while a background fold runs', () => {
  it('of a result in the retained tail of the snapshot (not in the region) discards the fold: the summary replays those bytes', async () => {
    const { host, session, fold, region } = await foldInFlight()
    const tail = resultsAfter(session, region.end).filter((seq) => fold.snapshotSeqs.has(seq))
    expect(tail.length).toBeGreaterThan(0)
    host.harness.ctx.toolResultPruner.pruneSession(session, new Set([tail[0]!]))
    // At once, its summary still unanswered.
    await until(() => fold.status === 'closed', 'the fold being discarded', 200)
    await host.engine.whenFoldsSettle(session)
    const [end] = endsOf(session)
    expect(end).toMatchObject({
      discarded: {
        reason: 'region-changed',
        detail: expect.stringMatching(new RegExp(`rewrote seq ${tail[0]} of the snapshot`)),
      },
    })
    // Its summary, when it answers, lands nowhere.
    host.summaries.hold = false
    for (const held of host.summaries.held.splice(0)) held.release()
    await host.engine.whenFoldsSettle(session)
    expect(session.events.some((event) => event.type === 'compaction/summary')).toBe(false)
    expect(openFolds(session)).toBe(0)
    host.harness.assertClean()
  })

  it('of a result appended after the snapshot keeps the fold, and its swap keeps the pruned result as it is', async () => {
    const { host, agent, session, fold, region } = await foldInFlight()
    agent.followup('One more module while the summary is written.')
    await agent.whenIdle()
    const after = resultsAfter(session, region.end).filter((seq) => !fold.snapshotSeqs.has(seq))
    expect(after.length).toBeGreaterThan(0)
    const { entries } = host.harness.ctx.toolResultPruner.pruneSession(session, new Set([after[0]!]))
    expect(entries).toHaveLength(1)
    const pruned = session.deriveMessages()[session.surface.nodes.length - 1] as Message
    await Promise.resolve()
    expect(fold.status).toBe('pending')
    host.summaries.hold = false
    for (const held of host.summaries.held.splice(0)) held.release()
    await host.engine.whenFoldsSettle(session)
    const [end] = endsOf(session)
    expect(end).not.toHaveProperty('error')
    expect(end).toMatchObject({ compactionId: fold.compactionId, timing: { mode: 'background' } })
    // The pruned result is still there, pruned, after the checkpoint.
    expect(session.deriveMessages()).toContainEqual(pruned)
    host.harness.assertClean()
  })
})
