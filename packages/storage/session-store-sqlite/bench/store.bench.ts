import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createUserMessage } from '@warmfold/llm'
import type { SessionBackend } from '@warmfold/session'
import { JsonlFileBackend } from '@warmfold/session'
import { afterAll, bench, describe } from 'vitest'
import { SqliteSessionBackend } from '../src/index.ts'

const directory = mkdtempSync(join(tmpdir(), 'warmfold-store-bench-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const STEPS = 200
const LARGE = 100_000
const stores: Record<string, () => SessionBackend> = {
  SQLite: () => new SqliteSessionBackend({ path: join(directory, 'sessions.db') }),
  JSONL: () => new JsonlFileBackend(join(directory, 'jsonl')),
}

let run = 0
for (const [name, make] of Object.entries(stores)) {
  describe(`${name} store`, () => {
    bench(
      `${STEPS} appends, flush (committed / fsynced) after each`,
      async () => {
        const backend = make()
        const session = await backend.create(`steps-${run++}`, {})
        for (let seq = 0; seq < STEPS; seq++) {
          session.append(
            'user/message',
            { message: createUserMessage(`step ${seq} ${'x'.repeat(200)}`, `m${seq}`) },
            'append',
          )
          await backend.flush(session)
        }
        await backend.release(session)
      },
      { iterations: 3, time: 0, warmupIterations: 0 },
    )

    const id = 'large'
    bench(
      `open a ${LARGE}-event session`,
      async () => {
        const backend = make()
        const session = await backend.open(id, {}, () => {})
        await backend.release(session)
      },
      {
        iterations: 3,
        time: 0,
        warmupIterations: 0,
        async setup() {
          const backend = make()
          if ((await backend.list()).includes(id)) return
          const session = await backend.create(id, {})
          for (let seq = 0; seq < LARGE; seq++)
            session.append('user/message', { message: createUserMessage(`event ${seq}`, `m${seq}`) }, 'append')
          await backend.release(session)
        },
      },
    )
  })
}
