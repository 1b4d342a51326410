import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isCheckpointMessage } from '@warmfold/compaction'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { mountEngine, oneToolStepPerTurn, ROUTE } from './engine-fixture.ts'
import type { StoredLine } from './torn-file.ts'
import { tearFirst } from './torn-file.ts'

let directory: string
const harnesses: EngineHarness[] = []

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-resume-bracket-'))
})
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
  await rm(directory, { recursive: true, force: true })
})

async function host(): Promise<EngineHarness> {
  const harness = await mountEngine({ conversation: oneToolStepPerTurn, directory })
  harnesses.push(harness)
  return harness
}

/** Runs one-step turns on a file store until a compaction committed and was flushed; unloads. */
async function sessionWithCompaction(id: string): Promise<void> {
  const harness = await host()
  const agent = await harness.ctx.agentLoop.create(id, { ...ROUTE })
  for (let turn = 0; !agent.session.events.some((event) => event.type === 'compaction/summary'); turn++) {
    if (turn > 60) throw new Error('no compaction after 60 turns')
    agent.followup(`turn ${turn}`)
    await agent.whenIdle()
  }
  await harness.ctx.sessions.flush(agent.session)
  harnesses.splice(harnesses.indexOf(harness), 1)
  await harness.dispose()
  harness.assertClean()
}

function tearInside(id: string, type: string): Promise<StoredLine[]> {
  return tearFirst(join(directory, `${id}.jsonl`), type)
}

async function resume(id: string) {
  const harness = await host()
  const repairs: unknown[] = []
  harness.ctx.on('session/repair', (repair) => void repairs.push(repair))
  await harness.ctx.sessions.open(id, { repairTornTail: true })
  const agent = await harness.ctx.agentLoop.create(id, { ...ROUTE })
  expect(repairs).toHaveLength(1)
  return { harness, agent }
}

describe('a compaction bracket torn by a crash is closed on resume with what really happened', () => {
  it('the checkpoint landed before compaction/end was torn: the end says committed and recovered, with no error', async () => {
    await sessionWithCompaction('torn-end')
    const kept = await tearInside('torn-end', 'compaction/end')
    expect(kept.at(-1)?.type).toBe('user/message')
    const start = kept.find((line) => line.type === 'compaction/start')!

    const { harness, agent } = await resume('torn-end')
    const added = agent.session.events.slice(kept.length)
    expect(added.map((event) => [event.type, event.data])).toEqual([
      ['compaction/end', { compactionId: start.data.compactionId, turn: start.data.turn, recovered: true }],
      ['turn/end', { turn: start.data.turn, reason: 'interrupted', steps: expect.any(Number), error: expect.stringContaining('closed when the session was resumed') }],
    ])
    // The checkpoint is live, and both closing events are on disk.
    expect(isCheckpointMessage(agent.session.deriveMessages()[0]!)).toBe(true)
    const stored = (await readFile(join(directory, 'torn-end.jsonl'), 'utf8')).split('\n').filter(Boolean)
    expect(stored).toHaveLength(kept.length + 2)

    // The resumed session goes on: the next compactions open and close their own brackets.
    for (let turn = 0; turn < 3; turn++) {
      agent.followup(`after resume ${turn}`)
      await agent.whenIdle()
    }
    expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: 'stop' })
    harness.assertClean()
  })

  it('the crash came before the checkpoint: the end is recovered with an error saying nothing was committed', async () => {
    await sessionWithCompaction('torn-summary')
    const kept = await tearInside('torn-summary', 'compaction/summary')
    expect(kept.at(-1)?.type).toBe('compaction/start')
    const { harness, agent } = await resume('torn-summary')
    const end = agent.session.events[kept.length] as SessionEvent<'compaction/end'>
    expect(end.type).toBe('compaction/end')
    expect(end.data).toEqual({
      compactionId: kept.at(-1)!.data.compactionId,
      turn: kept.at(-1)!.data.turn,
      recovered: true,
      error: 'interrupted: the process ended before this compaction finished; no checkpoint was committed',
    })
    expect(agent.session.deriveMessages().some((message) => isCheckpointMessage(message))).toBe(false)
    expect(agent.session.events[kept.length + 1]?.data).toMatchObject({ reason: 'interrupted' })
    harness.assertClean()
  })
})
