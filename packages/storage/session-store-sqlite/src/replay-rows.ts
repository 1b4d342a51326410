import type { SessionOptions } from '@warmfold/session'
import { restoreStoredLine, Session, SessionError } from '@warmfold/session'

/**
 * Replays the `(seq, event)` rows of session `id` into a new `Session` with the live append
 * rules (`restoreStoredLine`). A row that is not a valid event, whose JSON `seq` differs from its
 * key, or a unit (`"unit": n`) that the rows end inside is `SessionError('CORRUPT')` naming the
 * database, session, seq and what is wrong; nothing is changed.
 */
export function replayRows(
  path: string,
  id: string,
  rows: readonly (readonly [number, string])[],
  options: SessionOptions,
): Session {
  const session = new Session(id, options)
  let unitEnd = -1
  for (const [key, text] of rows) {
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
