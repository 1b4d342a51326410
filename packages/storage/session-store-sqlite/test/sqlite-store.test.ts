import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { Context } from '@cordisjs/core'
import { createUserMessage } from '@warmfold/llm'
import { SessionError, SessionStore } from '@warmfold/session'
import Database from 'libsql'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SqliteSessionBackend, sqliteSessionStore } from '../src/index.ts'
import { SCHEMA_VERSION } from '../src/sqlite-schema.ts'

let directory: string
let path: string
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'warmfold-sqlite-'))
  path = join(directory, 'nested', 'sessions.db')
})
const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  rmSync(directory, { recursive: true, force: true })
})

async function failure(promise: Promise<unknown>): Promise<SessionError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!SessionError.isInstance(error)) throw new Error(`expected a SessionError, got ${String(error)}`)
  return error
}

function raw(run: (db: InstanceType<typeof Database>) => void): void {
  mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path)
  try {
    run(db)
  } finally {
    db.close()
  }
}

/** A host process holding session `id` of the store at `path` (`fixtures/sqlite-flusher.ts`), once it is ready. */
async function flusher(id: string): Promise<ChildProcess> {
  const child = fork(resolve(import.meta.dirname, 'fixtures/sqlite-flusher.ts'), [path, id], {
    cwd: resolve(import.meta.dirname, '../../../..'),
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  children.push(child)
  const [ready] = (await once(child, 'message')) as [unknown]
  expect(ready).toEqual({ ready: true })
  return child
}

describe('SQLite session store', () => {
  it('is the one-line store of SessionStore and creates its folder, WAL mode and schema version', async () => {
    const ctx = new Context()
    await ctx.start()
    ctx.plugin(SessionStore, { store: sqliteSessionStore({ path }) })
    const session = await ctx.sessions.create('host')
    session.append('user/message', { message: createUserMessage('hi', 'm0') }, 'append')
    await ctx.sessions.flush(session)
    raw((db) => {
      expect((db.prepare('PRAGMA journal_mode').raw().get() as unknown[])[0]).toBe('wal')
      expect((db.prepare('PRAGMA user_version').raw().get() as unknown[])[0]).toBe(SCHEMA_VERSION)
      expect(db.prepare("SELECT seq FROM events WHERE session_id = 'host'").raw().all()).toEqual([[0]])
    })
    await ctx.sessions.closeAll()
    await ctx.stop()
  })

  it('refuses a database with a newer schema and leaves it unchanged', async () => {
    raw((db) => db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`))
    const error = await failure(new SqliteSessionBackend({ path }).list())
    expect(error.message).toContain(`schema version ${SCHEMA_VERSION + 1}, newer than version ${SCHEMA_VERSION}`)
    expect(error.message).toContain(path)
    raw((db) => expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'events'").raw().get()).toEqual([0]))
  })

  it('a file that is not an SQLite database, or a path under a file, is IO naming the path; the file is unchanged', async () => {
    mkdirSync(dirname(path), { recursive: true })
    const text = 'not a database: a session log someone moved here by mistake\n'.repeat(40)
    writeFileSync(path, text)
    const notDb = await failure(sqliteSessionStore({ path }).list())
    expect(notDb.code).toBe('IO')
    expect(notDb.message).toBe(
      `cannot open the SQLite session store ${path}: file is not a database (SQLITE_NOTADB); nothing was changed`,
    )
    expect(readFileSync(path, 'utf8')).toBe(text)
    const under = join(path, 'sessions.db')
    const notDir = await failure(sqliteSessionStore({ path: under }).create('s', {}))
    expect(notDir.code).toBe('IO')
    expect(notDir.message).toContain(`cannot open the SQLite session store ${under}: EEXIST`)
  })

  it('read changes nothing: no database or folder where there is none, no schema in an empty database', async () => {
    const missing = await failure(sqliteSessionStore({ path }).read('s'))
    expect(missing.code).toBe('NOT_FOUND')
    expect(missing.message).toBe(`there is no SQLite session store at ${path}`)
    expect(existsSync(dirname(path))).toBe(false)
    raw(() => {}) // an empty database file
    const empty = await failure(sqliteSessionStore({ path }).read('s'))
    expect(empty.code).toBe('NOT_FOUND')
    expect(empty.message).toContain("without warmfold's session tables (schema version 0)")
    raw((db) => expect(db.prepare('SELECT count(*) FROM sqlite_master').raw().get()).toEqual([0]))
  })

  it('read opens the database by a file: URI, so a path with characters a URI escapes reads as any other', async () => {
    const odd = join(directory, 'a b%20c#d?e', 'sessions.db')
    const backend = new SqliteSessionBackend({ path: odd })
    const session = await backend.create('odd', {})
    session.append('user/message', { message: createUserMessage('hi', 'm0') }, 'append')
    backend.releaseSync(session)
    expect((await sqliteSessionStore({ path: odd }).read('odd')).length).toBe(1)
  })

  it('a corrupt row is CORRUPT naming session, seq and what is wrong', async () => {
    const backend = new SqliteSessionBackend({ path })
    const session = await backend.create('c', {})
    session.append('user/message', { message: createUserMessage('one', 'm0') }, 'append')
    session.append('user/message', { message: createUserMessage('two', 'm1') }, 'append')
    backend.releaseSync(session)
    raw((db) => db.prepare("UPDATE events SET event = '{\"seq\":1,' WHERE session_id = 'c' AND seq = 1").run())
    const error = await failure(new SqliteSessionBackend({ path }).open('c', {}))
    expect(error.code).toBe('CORRUPT')
    expect(error.message).toMatch(/session c, events row seq 1: not valid JSON/)
    // The failed open released its writer row: a fixed row opens.
    raw((db) => db.prepare("DELETE FROM events WHERE session_id = 'c' AND seq = 1").run())
    expect((await new SqliteSessionBackend({ path }).open('c', {})).length).toBe(1)
  })

  it('a failed flush commits nothing and refuses later flushes until reopen', async () => {
    const backend = new SqliteSessionBackend({ path })
    const session = await backend.create('f', {})
    session.append('user/message', { message: createUserMessage('kept', 'm0') }, 'append')
    await backend.flush(session)
    // Another writer's row at seq 2 makes the second insert of the next flush fail (primary key).
    raw((db) => db.prepare("INSERT INTO events (session_id, seq, event) VALUES ('f', 2, '{}')").run())
    session.append('user/message', { message: createUserMessage('lost 1', 'm1') }, 'append')
    session.append('user/message', { message: createUserMessage('lost 2', 'm2') }, 'append')
    const error = await failure(backend.flush(session))
    expect(error.code).toBe('CLOSED')
    expect(error.message).toContain('committing events 1..2')
    raw((db) =>
      expect(db.prepare("SELECT seq FROM events WHERE session_id = 'f' ORDER BY seq").raw().all()).toEqual([[0], [2]]),
    )
    expect((await failure(backend.flush(session))).message).toContain('an earlier flush')
    expect(() => backend.releaseSync(session)).toThrow(/an earlier flush/)
  })

  it('fencing: a store whose writer row was taken over is refused on flush, not merged', async () => {
    const backend = new SqliteSessionBackend({ path })
    const session = await backend.create('t', {})
    raw((db) => db.prepare("UPDATE holders SET token = 'someone-else', pid = 1 WHERE session_id = 't'").run())
    session.append('user/message', { message: createUserMessage('late', 'm0') }, 'append')
    const error = await failure(backend.flush(session))
    expect(error.code).toBe('LOCKED')
    expect(error.message).toContain('no longer holds its writer row (pid 1')
    raw((db) => expect(db.prepare("SELECT count(*) FROM events WHERE session_id = 't'").raw().get()).toEqual([0]))
  })

  it('fencing: a store whose writer row was deleted (by hand, or a takeover that released since) is refused on flush, not merged', async () => {
    const backend = new SqliteSessionBackend({ path })
    const session = await backend.create('d', {})
    session.append('user/message', { message: createUserMessage('kept', 'm0') }, 'append')
    await backend.flush(session)
    raw((db) => db.prepare("DELETE FROM holders WHERE session_id = 'd'").run())
    session.append('user/message', { message: createUserMessage('late', 'm1') }, 'append')
    const error = await failure(backend.flush(session))
    expect(error.code).toBe('LOCKED')
    expect(error.message).toContain(
      'this store no longer holds its writer row (nobody holds it now); refusing to write',
    )
    raw((db) => expect(db.prepare("SELECT seq FROM events WHERE session_id = 'd'").raw().all()).toEqual([[0]]))
  })

  // Child processes start through tsx: seconds on 2 busy cores.
  it(
    'two processes flushing their sessions into one file at once: every flush commits (each takes the write lock up front)',
    { timeout: 60_000 },
    async () => {
      const backend = new SqliteSessionBackend({ path })
      for (const id of ['a', 'b']) backend.releaseSync(await backend.create(id, {}))
      const hosts = await Promise.all([flusher('a'), flusher('b')])
      // A flush that read the database before the other's commit and then wanted to write could
      // not (SQLITE_BUSY_SNAPSHOT, "database is locked", which no busy timeout waits out): with a
      // deferred BEGIN a flush fails here, the first one already in every run tried.
      const replies = hosts.map(async (host) => (await once(host, 'message'))[0])
      for (const host of hosts) host.send({ go: 40 })
      expect(await Promise.all(replies)).toEqual([{ flushed: 40 }, { flushed: 40 }])
      for (const id of ['a', 'b']) {
        const session = await backend.read(id)
        expect(session.events.map((event) => (event.data as { message: { id: string } }).message.id)).toEqual(
          Array.from({ length: 40 }, (_, index) => `${id}-${index}`),
        )
      }
    },
  )
})
