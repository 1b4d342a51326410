import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import { createUserMessage } from '@warmfold/llm'
import { SessionError } from '@warmfold/session'
import { afterAll, bench, describe, inject } from 'vitest'
import { postgresSessionStore } from '../src/index.ts'

const url = inject('postgresUrl')
const store = postgresSessionStore({ url })
afterAll(() => store.close())
const root = resolve(import.meta.dirname, '../../../..')

/** Sends a command to a writer process and resolves with its reply. */
function ask(child: ChildProcess, message: unknown): Promise<{ ok: boolean; code?: string }> {
  return new Promise((done) => {
    child.once('message', done as never)
    child.send(message as never)
  })
}

async function filled(count: number): Promise<string> {
  const id = `bench-${randomUUID().slice(0, 8)}`
  const session = await store.create(id, {})
  for (let index = 0; index < count; index++)
    session.append('user/message', { message: createUserMessage(`m ${index}`, `m-${index}`) }, 'append')
  await store.release(session)
  return id
}

describe('PostgreSQL store', async () => {
  const large = await filled(100_000)

  bench(
    'append + flush (one committed transaction) per step, 200 steps',
    async () => {
      const session = await store.create(`bench-${randomUUID().slice(0, 8)}`, {})
      for (let index = 0; index < 200; index++) {
        session.append('user/message', { message: createUserMessage(`m ${index}`, `m-${index}`) }, 'append')
        await store.flush(session)
      }
      await store.release(session)
    },
    { iterations: 5 },
  )

  bench(
    'open a 100k-event session',
    async () => {
      await store.release(await store.open(large, {}, () => {}))
    },
    { iterations: 3 },
  )

  bench(
    'two processes contend for one session (200 flushed appends each)',
    async () => {
      const id = await filled(0)
      const children: ChildProcess[] = [0, 1].map(() =>
        fork(resolve(import.meta.dirname, '../test/fixtures/pg-writer.ts'), [], {
          cwd: root,
          execArgv: ['--import', 'tsx'],
        }),
      )
      try {
        let refusals = 0
        await Promise.all(
          children.map(async (child) => {
            for (;;) {
              const opened = await ask(child, { op: 'open', url, id, leaseMs: 30_000 })
              if (opened.ok) break
              if (opened.code !== 'LOCKED') throw new Error(`open failed: ${JSON.stringify(opened)}`)
              refusals++
              await new Promise((done) => setTimeout(done, 10))
            }
            for (let step = 0; step < 200; step++) {
              await ask(child, { op: 'append', count: 1 })
              const flushed = await ask(child, { op: 'flush' })
              if (!flushed.ok) throw new Error(`flush failed: ${JSON.stringify(flushed)}`)
            }
            await ask(child, { op: 'close' })
          }),
        )
        const session = await store.open(id, {}, () => {})
        if (session.length !== 400) throw new SessionError('CORRUPT', `expected 400 events, found ${session.length}`)
        console.log(`[contention ${id}] ${refusals} LOCKED refusals; 400 events reopened intact`)
        await store.release(session)
      } finally {
        for (const child of children) child.kill()
      }
    },
    { iterations: 2 },
  )
})
