import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { SessionBackend } from '@warmfold/session'
import { JsonlFileBackend } from '@warmfold/session'
import type { PostgresSessionBackend } from '@warmfold/session-store-postgres'
import { postgresSessionStore } from '@warmfold/session-store-postgres'
import { SqliteSessionBackend } from '@warmfold/session-store-sqlite'
import { afterAll, bench, describe, inject } from 'vitest'
import type { ChildBackendSpec } from '../src/index.ts'

// Two processes race for one session in each store; each appends APPENDS events with a flush
// (a committed transaction or an fsync) after every append. The loser is refused with LOCKED
// until the winner releases, then writes its own; the session must reopen with both writers'
// events, each writer's in one run.

const APPENDS = 300
const root = resolve(import.meta.dirname, '../../../..')
const child = resolve(import.meta.dirname, '../src/contract-child.ts')
// The packages the child (src/contract-child.ts, in this package) imports each store from.
const SESSION = '@warmfold/session'
const SQLITE = '@warmfold/session-store-sqlite'
const POSTGRES = '@warmfold/session-store-postgres'
const directory = mkdtempSync(join(tmpdir(), 'warmfold-contention-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

// The PostgreSQL store runs against the server this project's global setup started.
const url = inject('postgresUrl')
const pools: PostgresSessionBackend[] = []
afterAll(() => Promise.all(pools.map((pool) => pool.close())))

const STORES: Record<string, { make: () => SessionBackend; spec: ChildBackendSpec }> = {
  JSONL: {
    make: () => new JsonlFileBackend(join(directory, 'jsonl')),
    spec: { module: SESSION, factory: 'JsonlFileBackend', args: [join(directory, 'jsonl')], construct: true },
  },
  SQLite: {
    make: () => new SqliteSessionBackend({ path: join(directory, 'sessions.db') }),
    spec: { module: SQLITE, factory: 'sqliteSessionStore', args: [{ path: join(directory, 'sessions.db') }] },
  },
  PostgreSQL: {
    make: () => {
      const store = postgresSessionStore({ url })
      pools.push(store)
      return store
    },
    spec: { module: POSTGRES, factory: 'postgresSessionStore', args: [{ url }] },
  },
}

let round = 0
for (const [name, store] of Object.entries(STORES)) {
  describe(`${name} store, two writer processes`, () => {
    bench(
      `${APPENDS} appends each, flush after every append`,
      async () => {
        const id = `contend-${process.pid}-${round++}`
        const setup = store.make()
        await setup.release(await setup.create(id, {}))
        const writers: ChildProcess[] = [0, 1].map(() =>
          fork(child, [JSON.stringify(store.spec)], { cwd: root, execArgv: ['--import', 'tsx'] }),
        )
        try {
          await Promise.all(writers.map((writer) => once(writer, 'message')))
          const reports = (await Promise.all(
            writers.map(async (writer) => {
              const reply = once(writer, 'message')
              writer.send({ op: 'contend', id, count: APPENDS })
              return (await reply)[0]
            }),
          )) as Array<{ refusals?: number; appendMs?: number; message?: string }>
          for (const report of reports)
            if (report.appendMs === undefined) throw new Error(`a writer failed: ${report.message}`)
          const reader = store.make()
          const session = await reader.open(id, {}, () => {})
          const owners = session.deriveMessages().map((message) => message.id.split('-')[0])
          await reader.release(session)
          const runs = owners.filter((owner, index) => index === 0 || owner !== owners[index - 1]).length
          if (owners.length !== 2 * APPENDS || runs !== 2)
            throw new Error(`corrupted: ${owners.length} events in ${runs} runs, expected ${2 * APPENDS} in 2`)
          const rates = reports.map((report) => Math.round(APPENDS / ((report.appendMs as number) / 1000)))
          console.log(
            `[${name} contention] LOCKED refusals per writer ${reports.map((report) => report.refusals).join(' / ')}; appends/s with a flush per append ${rates.join(' / ')}; ${2 * APPENDS} events reopened in 2 runs`,
          )
        } finally {
          for (const writer of writers) writer.kill()
        }
      },
      { iterations: 2, time: 0, warmupIterations: 0 },
    )
  })
}
