import { mkdtempSync, renameSync, rmSync, statSync, truncateSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import Database from 'libsql'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SqliteSessionBackend } from '../src/index.ts'

// What happens to the files under a running store: SQLite writes on through the descriptors it
// opened, so a deleted, replaced or truncated file must be found by the store, never by a reader
// who finds the acknowledged events gone.

let directory: string
let path: string
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'warmfold-sqlite-files-'))
  path = join(directory, 'sessions.db')
})
afterEach(() => rmSync(directory, { recursive: true, force: true }))

async function failure(promise: Promise<unknown>): Promise<SessionError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!SessionError.isInstance(error)) throw new Error(`expected a SessionError, got ${String(error)}`)
  return error
}

/** Runs `work` on a connection of its own to the database (another program at the same file). */
function other(work: (db: InstanceType<typeof Database>) => void): void {
  const db = new Database(path)
  try {
    work(db)
  } finally {
    db.close()
  }
}

function append(session: Session, count: number, bytes = 2_000): void {
  for (let index = 0; index < count; index++) {
    session.append(
      'user/message',
      { message: createUserMessage(`${session.length} ${'x'.repeat(bytes)}`, `m${session.length}`) },
      'append',
    )
  }
}

/**
 * A held session whose database file has several pages (40 events of 2 KB, checkpointed into it
 * by another connection, which truncates the WAL), with 2 more events committed in the WAL and
 * 1 appended but not flushed yet.
 */
async function heldSession(): Promise<{ backend: SqliteSessionBackend; session: Session }> {
  const backend = new SqliteSessionBackend({ path })
  const session = await backend.create('s', {})
  append(session, 40)
  await backend.flush(session)
  other((db) => expect(db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').raw().get()).toEqual([0, 0, 0]))
  append(session, 2)
  await backend.flush(session)
  append(session, 1)
  return { backend, session }
}

const size = (file: string) => statSync(file).size

describe('SQLite store whose files change under it', () => {
  // PATH in a message stands for the database's path, which each case makes anew.
  it.each([
    [
      'the database file is deleted',
      () => unlinkSync(path),
      'the database file was deleted while this store had it open',
    ],
    [
      'the database file is truncated to nothing',
      () => truncateSync(path, 0),
      'the database file was truncated to 0 bytes while this store had it open',
    ],
    [
      'the database file is truncated to half',
      () => truncateSync(path, size(path) / 2),
      'the database file was truncated from',
    ],
    [
      'the database file is replaced by another database',
      () => {
        const copy = `${path}.copy`
        const db = new Database(copy)
        db.exec('CREATE TABLE unrelated (n INTEGER)')
        db.close()
        renameSync(copy, path)
      },
      'the database file was replaced by another file while this store had it open',
    ],
    [
      'the WAL is deleted',
      () => unlinkSync(`${path}-wal`),
      'its write-ahead log PATH-wal was deleted while this store had it open',
    ],
    [
      'the WAL is truncated to nothing',
      () => truncateSync(`${path}-wal`, 0),
      'its write-ahead log PATH-wal was truncated to 0 bytes while this store had it open, but the',
    ],
    [
      'the WAL is truncated to half',
      () => truncateSync(`${path}-wal`, Math.floor(size(`${path}-wal`) / 2)),
      'its write-ahead log PATH-wal was truncated to',
    ],
  ])(
    '%s: the flush fails with IO naming the path and what happened, and acknowledges nothing',
    async (_name, damage, what) => {
      const { backend, session } = await heldSession()
      damage()
      const error = await failure(backend.flush(session))
      expect(error.code).toBe('IO')
      expect(error.message).toContain(
        `committing events 42..42 to ${path} failed, none of them is acknowledged: the SQLite session store ${path} cannot be written: ${what.replace('PATH', path)}`,
      )
      // Refused from here on, like any failed flush: the session must be reopened.
      append(session, 1)
      expect((await failure(backend.flush(session))).code).toBe('CLOSED')
      // Nor does the same connection take a new session.
      expect((await failure(backend.create('another', {}))).message).toContain(
        `cannot be written: ${what.replace('PATH', path)}`,
      )
      expect(() => backend.releaseSync(session)).toThrow(/an earlier flush/)
    },
  )

  it('another connection checkpointing, truncating the WAL and vacuuming between flushes is not taken for damage', async () => {
    const { backend, session } = await heldSession()
    const neighbour = new SqliteSessionBackend({ path })
    const neighbourSession = await neighbour.create('neighbour', {})
    // Enough pages for automatic checkpoints and WAL restarts in the neighbour's commits.
    for (let round = 0; round < 5; round++) {
      append(neighbourSession, 200, 3_000)
      await neighbour.flush(neighbourSession)
      append(session, 1)
      await backend.flush(session)
    }
    other((db) => {
      db.exec('CREATE TABLE scratch (text TEXT)')
      db.prepare(
        "INSERT INTO scratch (text) SELECT printf('%.4000c', 'y') FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) SELECT i FROM n)",
      ).run()
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    })
    append(session, 1)
    await backend.flush(session)
    const grown = size(path)
    // The database file shrinks by a VACUUM, with a header that says so.
    other((db) => {
      db.exec('DROP TABLE scratch')
      db.exec('VACUUM')
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    })
    expect(size(path)).toBeLessThan(grown)
    append(session, 1)
    await backend.flush(session)
    expect((await backend.read('s')).length).toBe(session.length)
    neighbour.releaseSync(neighbourSession)
    backend.releaseSync(session)
    expect((await new SqliteSessionBackend({ path }).open('s', {})).length).toBe(session.length)
  })
})
