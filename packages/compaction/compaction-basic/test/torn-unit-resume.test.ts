import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Session, SessionEvent, TornTailRepair } from '@warmfold/session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { mountEngine, oneToolStepPerTurn, ROUTE } from './engine-fixture.ts'
import { tearLine } from './torn-file.ts'

let directory: string
const hosts: EngineHarness[] = []

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-torn-unit-'))
})
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose()
  await rm(directory, { recursive: true, force: true })
})

/** A complete host on the JSONL file store, with the pruner and the invariant checker; only the model's content is scripted. */
async function fileHost(): Promise<EngineHarness> {
  const host = await mountEngine({
    directory,
    engine: { auto: false },
    pruner: { thresholdChars: 1000, headChars: 300, tailChars: 100 },
    conversation: oneToolStepPerTurn,
    resultChars: 4000,
  })
  hosts.push(host)
  return host
}

async function turn(agent: { followup(text: string): void; whenIdle(): Promise<void> }, text: string): Promise<void> {
  agent.followup(text)
  await agent.whenIdle()
}

/** Cuts the session file in the middle of the line of event `seq`, as a crash mid-write would. */
async function cutInside(id: string, seq: number): Promise<string> {
  const file = join(directory, `${id}.jsonl`)
  await tearLine(file, seq)
  return file
}

/** Reopens `id` with repair in a fresh host, as a restarted process would. */
async function reopen(id: string): Promise<{ host: EngineHarness; session: Session; repairs: TornTailRepair[] }> {
  const host = await fileHost()
  const repairs: TornTailRepair[] = []
  host.ctx.on('session/repair', (repair) => void repairs.push(repair))
  const session = await host.ctx.sessions.open(id, { repairTornTail: true })
  return { host, session, repairs }
}

function turnEnds(session: Session): SessionEvent<'turn/end'>[] {
  return session.events.filter((event) => event.type === 'turn/end') as SessionEvent<'turn/end'>[]
}

describe('a crash inside a unit rolls the whole unit back, so a resume can append', () => {
  it('a prune whose tool/result replacement was torn: repair removes both and the agent resumes', async () => {
    const first = await fileHost()
    const agent = await first.ctx.agentLoop.create('pruned', { ...ROUTE })
    await turn(agent, 'Read the first file.')
    const pruned = first.ctx.toolResultPruner.pruneSession(agent.session)
    expect(pruned.entries).toHaveLength(1)
    await first.ctx.sessions.flush(agent.session)
    const { pruneSeq, replacementSeq } = pruned.entries[0]!
    expect(replacementSeq).toBe(pruneSeq + 1)
    expect(agent.session.length).toBe(replacementSeq + 1)
    await first.dispose()
    const file = await cutInside('pruned', replacementSeq)

    const { host, session, repairs } = await reopen('pruned')
    expect(repairs).toEqual([expect.objectContaining({ file, line: pruneSeq + 1, droppedEvents: 1 })])
    expect(session.length).toBe(pruneSeq)
    expect(session.events.at(-1)?.type).not.toBe('compaction/prune')
    const resumed = await host.ctx.agentLoop.create('pruned', { ...ROUTE })
    expect(resumed.session).toBe(session)
    await turn(resumed, 'Go on.')
    expect(turnEnds(session).at(-1)?.data).toMatchObject({ reason: 'stop' })
    // The rolled-back prune is simply redone on the resumed log.
    expect(host.ctx.toolResultPruner.pruneSession(session).entries).toHaveLength(2)
    await host.ctx.sessions.close(session)
    host.assertClean()
  })

  it('a summary whose checkpoint was torn: repair removes both and the agent resumes and compacts', async () => {
    const first = await fileHost()
    const agent = await first.ctx.agentLoop.create('summarized', { ...ROUTE })
    for (let index = 0; index < 3; index++) await turn(agent, `Turn ${index}.`)
    const result = await first.ctx.compaction.compactNow(agent)
    expect(result).not.toBeNull()
    expect(result!.checkpointSeq).toBe(result!.summarySeq + 1)
    await first.ctx.sessions.flush(agent.session)
    await first.dispose()
    await cutInside('summarized', result!.checkpointSeq)

    const { host, session, repairs } = await reopen('summarized')
    expect(repairs).toEqual([expect.objectContaining({ line: result!.summarySeq + 1, droppedEvents: 1 })])
    expect(session.length).toBe(result!.summarySeq)
    expect(session.events.at(-1)?.type).toBe('compaction/start')
    const resumed = await host.ctx.agentLoop.create('summarized', { ...ROUTE })
    await turn(resumed, 'Go on.')
    expect(turnEnds(session).at(-1)?.data).toMatchObject({ reason: 'stop' })
    // The bracket the crash left open is closed, and a new compaction commits.
    expect(await host.ctx.compaction.compactNow(resumed)).not.toBeNull()
    await host.ctx.sessions.close(session)
    host.assertClean()
  })
})
