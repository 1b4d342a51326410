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

async function host(background: boolean): Promise<EngineHarness> {
  const harness = await mountEngine({
    conversation: oneToolStepPerTurn,
    directory,
    engine: { background: { enabled: background } },
  })
  harnesses.push(harness)
  return harness
}

/** Runs one-step turns on a file store until a compaction committed and was flushed; unloads. */
async function sessionWithCompaction(id: string, background: boolean): Promise<void> {
  const harness = await host(background)
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

async function resume(id: string, background: boolean) {
  const harness = await host(background)
  const repairs: unknown[] = []
  harness.ctx.on('session/repair', (repair) => void repairs.push(repair))
  await harness.ctx.sessions.open(id, { repairTornTail: true })
  const agent = await harness.ctx.agentLoop.create(id, { ...ROUTE })
  expect(repairs).toHaveLength(1)
  return { harness, agent }
}

/** The turn open where the file was torn: the last `turn/start` without its `turn/end`. */
function openTurn(kept: readonly StoredLine[]): number {
  const start = kept.findLast((line) => line.type === 'turn/start')!
  expect(kept.slice(kept.indexOf(start)).some((line) => line.type === 'turn/end')).toBe(false)
  return start.data.turn as number
}

/**
 * The bracket torn by the crash: a fold on the turn's path logs start, summary, checkpoint and
 * end together; a background fold's start comes turns before its swap, so the conversation's
 * events lie between (and the turn open at the crash is not the bracket's).
 */
function tornBracket(kept: readonly StoredLine[], mode: 'sync' | 'background'): StoredLine {
  const start = kept.findLast((line) => line.type === 'compaction/start')!
  expect(start.data.trigger).toBe(mode === 'sync' ? 'pressure' : 'background')
  const between = kept
    .slice(kept.indexOf(start) + 1)
    .filter(
      (line) =>
        !line.type.startsWith('compaction/') && !(line.type === 'user/message' && line.surface?.op === 'replace'),
    )
  if (mode === 'sync') expect(between).toEqual([])
  else expect(between.length).toBeGreaterThan(0)
  return start
}

describe.each(['sync', 'background'] as const)(
  'a %s compaction bracket torn by a crash is closed on resume with what really happened',
  (mode) => {
    const background = mode === 'background'
    it('the checkpoint landed before compaction/end was torn: the end says committed and recovered, with no error', async () => {
      await sessionWithCompaction('torn-end', background)
      const kept = await tearInside('torn-end', 'compaction/end')
      // The fold's unit ends with its audit, after the checkpoint.
      expect(kept.at(-1)?.type).toBe('compaction/audit')
      expect(kept.at(-2)?.type).toBe('user/message')
      const start = tornBracket(kept, mode)

      const { harness, agent } = await resume('torn-end', background)
      const added = agent.session.events.slice(kept.length)
      expect(added.map((event) => [event.type, event.data])).toEqual([
        ['compaction/end', { compactionId: start.data.compactionId, turn: start.data.turn, recovered: true }],
        [
          'turn/end',
          {
            turn: openTurn(kept),
            reason: 'interrupted',
            steps: expect.any(Number),
            error: expect.stringContaining('closed when the session was resumed'),
          },
        ],
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
      await sessionWithCompaction('torn-summary', background)
      const kept = await tearInside('torn-summary', 'compaction/summary')
      const start = tornBracket(kept, mode)
      // A background fold's summary was in hand (its swap unit was being written): it is dropped, not re-validated.
      const { harness, agent } = await resume('torn-summary', background)
      const end = agent.session.events[kept.length] as SessionEvent<'compaction/end'>
      expect(end.type).toBe('compaction/end')
      expect(end.data).toEqual({
        compactionId: start.data.compactionId,
        turn: start.data.turn,
        recovered: true,
        error: 'interrupted: the process ended before this compaction finished; no checkpoint was committed',
      })
      expect(agent.session.deriveMessages().some((message) => isCheckpointMessage(message))).toBe(false)
      expect(agent.session.events[kept.length + 1]?.data).toMatchObject({ turn: openTurn(kept), reason: 'interrupted' })
      harness.assertClean()
    })
  },
)
