import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { sqliteSessionStore } from '@warmfold/session-store-sqlite'
import { afterEach, describe, expect, it } from 'vitest'
import type { BasicCompactionEngine } from '../src/index.ts'
import { endsOf, expectEveryMessageKept, openFolds } from './background-fold-fixture.ts'
import type { EngineHarness } from './engine-fixture.ts'
import { mountEngine, oneToolStepPerTurn, ROUTE } from './engine-fixture.ts'

/** The repository root: the child runs from here so `--import tsx` resolves. */
const ROOT = resolve(import.meta.dirname, '../../../..')

interface Crash {
  /** Ids of the session's messages when the child had flushed it: every one is durable. */
  readonly acknowledged: string[]
  readonly compactionId: string
  /** Summary calls answered before the kill. */
  readonly summariesAnswered: number
  /** Whether the fold's bracket had closed (it must not have). */
  readonly landed: boolean
}

const harnesses: EngineHarness[] = []
const folders: string[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

/** Runs the child host until its fold is at `moment`, then kills it with SIGKILL. */
async function crash(store: 'jsonl' | 'sqlite', path: string, moment: 'in-flight' | 'in-hand'): Promise<Crash> {
  const child = fork(resolve(import.meta.dirname, 'fixtures/background-fold-crash-child.ts'), [store, path, moment], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  try {
    const [report] = (await Promise.race([
      once(child, 'message'),
      once(child, 'exit').then(([code]) =>
        Promise.reject(new Error(`the crash child exited with ${String(code)} before it reported`)),
      ),
    ])) as [Crash]
    return report
  } finally {
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }
}

describe.each(['jsonl', 'sqlite'] as const)(
  'a background fold cut by kill -9, resumed in a fresh process from the %s store',
  (store) => {
    it.each(['in-flight', 'in-hand'] as const)(
      'with its summary %s: the bracket is closed as interrupted, nothing acknowledged is lost or reordered, the summary is dropped and a new fold lands',
      async (moment) => {
        const folder = await mkdtemp(join(tmpdir(), `warmfold-background-crash-${store}-`))
        folders.push(folder)
        const path = store === 'sqlite' ? join(folder, 'sessions.db') : folder
        const { acknowledged, compactionId, summariesAnswered, landed } = await crash(store, path, moment)
        // Killed with the fold open: its summary call running, or its summary in hand but not swapped in.
        expect({ summariesAnswered, landed }).toEqual({
          summariesAnswered: moment === 'in-hand' ? 1 : 0,
          landed: false,
        })

        const harness = await mountEngine({
          ...(store === 'sqlite' ? { store: sqliteSessionStore({ path }) } : { directory: path }),
          engine: { maxTokens: 1000, idle: { enabled: false }, background: { startRatio: 0.5 } },
          conversation: oneToolStepPerTurn,
        })
        harnesses.push(harness)
        const agent = await harness.ctx.agentLoop.create('crash', { ...ROUTE, system: 'You are a coding agent.' })
        const session = agent.session
        // The bracket the crash left open is closed as interrupted, once; the summary in hand was not kept.
        const ends = endsOf(session).filter((end) => end.compactionId === compactionId)
        expect(ends).toEqual([
          {
            compactionId,
            turn: expect.any(Number),
            error: 'interrupted: the process ended before this compaction finished; no checkpoint was committed',
            recovered: true,
          },
        ])
        expect(session.events.filter((event) => event.type === 'compaction/summary')).toEqual([])
        expect(openFolds(session)).toBe(0)
        // Every acknowledged message is there, in order, once, and nothing else (in-hand: the
        // interrupted tool call is the last one).
        const ids = session.deriveMessages().map((message) => message.id)
        expect(ids).toEqual(acknowledged)
        expect(new Set(ids).size).toBe(ids.length)

        // The conversation goes on and a new fold (a new summary call, not the dropped one) lands.
        for (let turn = 0; !session.events.some((event) => event.type === 'compaction/summary'); turn++) {
          if (turn > 30) throw new Error('no fold landed after the resume')
          agent.followup(`After the crash (${turn}).`)
          await agent.whenIdle()
        }
        await (harness.ctx.compaction as BasicCompactionEngine).whenFoldsSettle(session)
        const summary = session.events.find((event) => event.type === 'compaction/summary')
        expect(summary?.data).toMatchObject({ compactionId: expect.any(String) })
        expect((summary?.data as { compactionId?: string } | undefined)?.compactionId).not.toBe(compactionId)
        expect(harness.summaries().length).toBeGreaterThan(0)
        expectEveryMessageKept(session)
        const after = session.deriveMessages().map((message) => message.id)
        expect(new Set(after).size).toBe(after.length)
        harness.assertClean()
      },
      60_000,
    )
  },
)
