import type { SessionOptions } from '@warmfold/session'
import { Session, SessionError } from '@warmfold/session'

/**
 * Replays the `(seq, event)` rows of session `id` into a new `Session` with the live append
 * rules (`Session.restore`). A row that is not a valid event, whose JSON `seq` differs from its
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
    const problem = replayRow(session, seq, text)
    if (typeof problem === 'string') {
      throw new SessionError(
        'CORRUPT',
        `${path}: session ${id}, events row seq ${seq}: ${problem}; the session was not opened and the database ` +
          `was not changed`,
      )
    }
    if (problem.unit !== undefined && problem.unit > 1) unitEnd = seq + problem.unit - 1
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

function replayRow(session: Session, seq: number, text: string): { unit?: number } | string {
  let record: unknown
  try {
    record = JSON.parse(text)
  } catch (error) {
    return `not valid JSON (${(error as Error).message})`
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not an event object'
  const { unit, ...event } = record as { unit?: unknown; seq?: unknown }
  if (event.seq !== seq) return `the event says seq ${JSON.stringify(event.seq)}`
  if (unit !== undefined && (!Number.isInteger(unit) || (unit as number) < 1))
    return `unit ${JSON.stringify(unit)} is not a count of events (an integer of at least 1)`
  try {
    session.restore(event as Parameters<Session['restore']>[0])
  } catch (error) {
    return (error as Error).message
  }
  return unit === undefined ? {} : { unit: unit as number }
}
