import { ManualCompactionError } from '@warmfold/compaction'
import type { Message } from '@warmfold/llm'
import type { Session, SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { mountEngine, runAgent, stopAfter } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** Six reads whose results (2,400 characters) are all over the pruner's budget, then an answer. */
async function session(): Promise<{ harness: EngineHarness; agent: Awaited<ReturnType<typeof runAgent>> }> {
  const harness = await mountEngine({
    engine: { auto: false },
    conversation: stopAfter(6),
    resultChars: 2400,
    pruner: { thresholdChars: 2000, headChars: 1000, tailChars: 200 },
  })
  harnesses.push(harness)
  return { harness, agent: await runAgent(harness) }
}

/** Seq of the first `tool/result` node on the surface (in the region of a fold of the head). */
function firstResultSeq(session: Session): number {
  return session.surface.nodes.find((seq) => session.eventAt(seq)?.type === 'tool/result') as number
}

function ends(session: Session): SessionEvent<'compaction/end'>['data'][] {
  return session.events.filter((event) => event.type === 'compaction/end').map((event) => event.data)
}

describe('a compaction/after listener that rewrites the region', () => {
  it('the checks after the hook refuse the checkpoint (the region changed), nothing is committed', async () => {
    const { harness, agent } = await session()
    const { session: log } = agent
    const before: Message[] = []
    harness.ctx.on('compaction/after', async (context) => {
      await new Promise((resolve) => setImmediate(resolve))
      // A host's listener prunes an old result: it is in the region the checkpoint is about to replace.
      harness.ctx.toolResultPruner.pruneSession(context.session, new Set([firstResultSeq(context.session)]))
      before.push(...context.session.deriveMessages())
    })
    const failure = await harness.ctx.compaction.compactNow(agent).catch((error: unknown) => error)
    expect(ManualCompactionError.isInstance(failure)).toBe(true)
    expect(failure).toMatchObject({ code: 'changed' })
    expect((failure as Error).message).toMatch(/no longer hold the summarized nodes/)
    expect(log.events.some((event) => event.type === 'compaction/summary')).toBe(false)
    expect(ends(log)).toEqual([expect.objectContaining({ error: expect.stringMatching(/no longer hold/) })])
    // The session is as the listener left it: its prune, and no checkpoint.
    expect(log.deriveMessages()).toEqual(before)
    harness.assertClean()
  })
})
