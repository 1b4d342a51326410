import { randomUUID } from 'node:crypto'
import type { ProcessIdentity } from '@warmfold/session'
import { currentProcess, liveness, SessionError } from '@warmfold/session'
import type { SqliteDatabase } from './sqlite-schema.ts'

/**
 * Takes the writer row of session `id` for a new holder and returns its token. Call it inside
 * a write transaction: SQLite's write lock serializes every contender (in any process), so the
 * check and the insert cannot interleave with another's. A row whose owner still runs is
 * refused with `LOCKED` naming it; a row whose owner is gone (kill -9, reboot, reused pid: see
 * `liveness` in `@warmfold/session`) is replaced.
 */
export function takeHolder(db: SqliteDatabase, path: string, id: string): string {
  const row = db.prepare('SELECT token, pid, hostname, boot, start FROM holders WHERE session_id = ?').raw().get(id) as
    | unknown[]
    | undefined
  if (row) {
    const [token, pid, hostname, boot, start] = row as [string, number, string, string | null, number | null]
    const owner: ProcessIdentity = {
      pid,
      hostname,
      ...(boot === null ? {} : { boot }),
      ...(start === null ? {} : { start: Number(start) }),
    }
    const state = liveness(owner)
    if (state.alive) {
      const same =
        pid === process.pid && hostname === currentProcess().hostname ? ' (another store in this process)' : ''
      throw new SessionError(
        'LOCKED',
        `session ${id} in ${path} is held by pid ${pid} on host ${hostname}${same} (holder ${token.slice(0, 8)}): ` +
          `${state.reason}; close it there first`,
      )
    }
    dropHolder(db, id, token)
  }
  const self = currentProcess()
  const token = randomUUID()
  db.prepare(
    'INSERT INTO holders (session_id, token, pid, hostname, boot, start, since) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(id, token, self.pid, self.hostname, self.boot ?? null, self.start ?? null, Date.now())
  return token
}

/**
 * Fencing: inside a write transaction, checks that session `id` is still held by `token`. A
 * holder whose row was taken over (its process was wrongly judged gone) is refused, never merged.
 */
export function checkHolder(db: SqliteDatabase, path: string, id: string, token: string): void {
  const row = db.prepare('SELECT token, pid, hostname FROM holders WHERE session_id = ?').raw().get(id) as
    | [string, number, string]
    | undefined
  if (row?.[0] === token) return
  const now = row ? `pid ${row[1]} on host ${row[2]} holds it now` : 'nobody holds it now'
  throw new SessionError(
    'LOCKED',
    `session ${id} in ${path}: this store no longer holds its writer row (${now}); refusing to write`,
  )
}

/** Removes session `id`'s writer row if it is still `token`'s. */
export function dropHolder(db: SqliteDatabase, id: string, token: string): void {
  db.prepare('DELETE FROM holders WHERE session_id = ? AND token = ?').run(id, token)
}
