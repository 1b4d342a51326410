import type { SessionOptions } from '@warmfold/session'
import { restoreStoredLine, Session, SessionError } from '@warmfold/session'
import type { SqliteDatabase } from './sqlite-schema.ts'

/** `NOT_FOUND` unless session `id` is stored in `db` (the database at `path`). */
export function assertStored(db: SqliteDatabase, path: string, id: string): void {
  if (!isStored(db, id)) throw new SessionError('NOT_FOUND', `session ${id} does not exist in ${path}`)
}

/** Whether session `id` is stored in `db`. */
export function isStored(db: SqliteDatabase, id: string): boolean {
  return db.prepare('SELECT 1 FROM sessions WHERE id = ?').raw().get(id) !== undefined
}

/**
 * Replays the `(seq, event)` rows of session `id` in `db` (the database at `path`) into a new
 * `Session` with the live append rules (`restoreStoredLine`). A row that is not a valid event,
 * whose JSON `seq` differs from its key, or a unit (`"unit": n`) that the rows end inside is
 * `SessionError('CORRUPT')` naming the database, session, seq and what is wrong; nothing is changed.
 */
export function replayRows(db: SqliteDatabase, path: string, id: string, options: SessionOptions): Session {
  const rows = db.prepare('SELECT seq, event FROM events WHERE session_id = ? ORDER BY seq').raw().all(id)
  const session = new Session(id, options)
  let unitEnd = -1
  for (const [key, text] of rows as [number, string][]) {
    const seq = Number(key)
    const replayed = restoreStoredLine(session, text, seq)
    if (typeof replayed === 'string') {
      throw new SessionError(
        'CORRUPT',
        `${path}: session ${id}, events row seq ${seq}: ${replayed}; the session was not opened and the database ` +
          `was not changed`,
      )
    }
    if (replayed.unit !== undefined && replayed.unit > 1) unitEnd = seq + replayed.unit - 1
  }
  if (unitEnd >= session.length) {
    throw new SessionError(
      'CORRUPT',
      `${path}: session ${id}: the rows end at seq ${session.length - 1} inside a unit that runs to seq ` +
        `${unitEnd}; the session was not opened and the database was not changed`,
    )
  }
  return session
}
