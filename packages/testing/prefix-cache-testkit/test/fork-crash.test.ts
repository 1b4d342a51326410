import { fork } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { LlmRuntime, textOf } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { AnySessionEvent } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import { sqliteSessionStore } from '@warmfold/session-store-sqlite'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { FORK_HOST_OPTIONS, FORK_TASK } from './fixtures/fork-host-options.ts'

// kill -9 of a host in the middle of a fork, then parent and child resumed from the same store:
// nothing flushed is lost, and the parent logs the fork as finished or failed, exactly once.

const ROOT = resolve(import.meta.dirname, '../../../..')
const folders: string[] = []
const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

/** Runs the fork host until it reports it stopped where asked, then kills it with SIGKILL. */
async function killMidFork(kind: 'file' | 'sqlite', location: string, stop: 'tool' | 'finished'): Promise<void> {
  const child = fork(resolve(import.meta.dirname, 'fixtures/fork-host.ts'), [kind, location, stop], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, signal) => done(signal)))
  const reply = await new Promise<unknown>((done, fail) => {
    child.once('message', done)
    child.once('exit', (code) => fail(new Error(`the fork host exited with ${code} before it stopped`)))
  })
  expect(reply).toEqual({ stopped: stop })
  child.kill('SIGKILL')
  expect(await exited).toBe('SIGKILL')
}

async function host(kind: 'file' | 'sqlite', location: string): Promise<TestContext> {
  const context = await createTestContext()
  contexts.push(context)
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(
    SessionStore,
    kind === 'file' ? { store: 'file', directory: location } : { store: sqliteSessionStore({ path: location }) },
  )
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.llm.registerAdapter(
    'scripted',
    new ScriptedAdapter({
      models: { 'scripted-model': { contextWindow: 64000, defaultMaxTokens: 1000 } },
      responses: [],
    }),
  )
  return context
}

const ends = (events: readonly AnySessionEvent[]) => events.filter((event) => event.type === 'agent/fork-end')

describe('a fork killed with SIGKILL, resumed from the store', { timeout: 60_000 }, () => {
  for (const kind of ['file', 'sqlite'] as const) {
    for (const stop of ['tool', 'finished'] as const) {
      it(`${kind}: killed ${stop === 'tool' ? 'inside the child’s tool call' : 'after the child finished, before the parent logged it'}: the parent sees it ${stop === 'tool' ? 'failed' : 'finished'}, once`, async () => {
        const folder = await mkdtemp(join(tmpdir(), 'warmfold-fork-crash-'))
        folders.push(folder)
        const location = kind === 'file' ? folder : join(folder, 'sessions.db')
        await killMidFork(kind, location, stop)

        const first = await host(kind, location)
        // What the killed host had flushed: the parent's turn and the fork's start; the child's seed.
        const storedParent = await first.ctx.sessions.read('parent')
        expect(storedParent.events.map((event) => event.type)).toEqual([
          'turn/start',
          'user/message',
          'request/header',
          'assistant/message',
          'tool/result',
          'assistant/message',
          'turn/end',
          'agent/fork-start',
        ])
        const storedChild = await first.ctx.sessions.read('parent.fork-1')
        expect(storedChild.events[0]).toMatchObject({
          type: 'agent/fork',
          data: { parentSessionId: 'parent', parentSeq: storedParent.surface.nodes.at(-2), cacheSessionId: 'parent' },
        })
        // The replayed request: the parent's last request (its messages before the final answer).
        expect(storedChild.deriveMessages().slice(0, 3)).toEqual(storedParent.deriveMessages().slice(0, 3))

        const parent = await first.ctx.agentLoop.create('parent', FORK_HOST_OPTIONS)
        expect(parent.lastError).toBeUndefined()
        expect(parent.session.events.slice(0, storedParent.length)).toEqual(storedParent.events)
        const [end] = ends(parent.session.events)
        expect(ends(parent.session.events)).toHaveLength(1)
        if (stop === 'tool') {
          expect(end!.data).toEqual({
            childSessionId: 'parent.fork-1',
            reason: 'failed',
            error:
              'the process running this fork ended before the fork did (its turn never ended); settled when the parent was resumed',
          })
        } else {
          expect(end!.data).toEqual({
            childSessionId: 'parent.fork-1',
            reason: 'finished',
            answer: 'add is defined in src/add.ts.',
          })
        }
        const child = await first.ctx.agentLoop.create('parent.fork-1', FORK_HOST_OPTIONS)
        expect(child.lastError).toBeUndefined()
        expect(child.lineage).toMatchObject({ parentSessionId: 'parent', cacheSessionId: 'parent' })
        expect(child.session.events.slice(0, storedChild.length)).toEqual(storedChild.events)
        // The task was flushed with the child's turn (never before its first tool results).
        expect(child.session.deriveMessages().some((message) => textOf(message.content) === FORK_TASK)).toBe(
          stop === 'finished',
        )
        if (stop === 'finished')
          expect(child.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)).toEqual([
            { turn: 1, reason: 'stop', steps: 2 },
          ])
        await first.ctx.sessions.closeAll()
        await first.dispose()
        contexts.splice(contexts.indexOf(first), 1)

        // Resumed again: the fork stays settled once.
        const second = await host(kind, location)
        const again = await second.ctx.agentLoop.create('parent', FORK_HOST_OPTIONS)
        expect(ends(again.session.events)).toEqual([end])
        await second.ctx.sessions.closeAll()
      })
    }
  }
})
