import type { SessionOptions } from '@warmfold/session'
import { Session, SessionError } from '@warmfold/session'

/** One stored event row: its position and the canonical-JSON line. */
export interface EventRow {
  readonly seq: string | number
  readonly event: string
}

/**
 * Replays stored rows into a new `Session` with the live append rules. A bad row (not JSON, a
 * seq that does not match its position, a unit the rows end inside, an event the rules
 * refuse) is `SessionError('CORRUPT')` naming the session, the seq and what is wrong.
 *
 * A unit is written in one transaction, so unlike a file the rows can never end inside one
 * after a crash: such rows were changed by hand, and are corrupt rather than torn.
 */
export function readSessionRows(
  id: string,
  rows: readonly EventRow[],
  where: string,
  options: SessionOptions,
): Session {
  const session = new Session(id, options)
  let unitEnd = -1
  for (const row of rows) {
    const seq = Number(row.seq)
    const fail = (what: string) =>
      new SessionError(
        'CORRUPT',
        `session ${id} in ${where}: event row seq ${seq}: ${what}; the session was not opened and nothing was changed`,
      )
    let record: unknown
    try {
      record = JSON.parse(row.event)
    } catch (error) {
      throw fail(`not valid JSON (${(error as Error).message})`)
    }
    if (typeof record !== 'object' || record === null || Array.isArray(record)) throw fail('not an event object')
    const { unit, ...event } = record as { unit?: unknown; seq?: unknown }
    if (event.seq !== seq) throw fail(`the event says seq ${JSON.stringify(event.seq)}`)
    if (unit !== undefined) {
      if (!Number.isInteger(unit) || (unit as number) < 2)
        throw fail(`unit ${JSON.stringify(unit)} is not a count of 2 or more events`)
      if (seq <= unitEnd) throw fail(`a unit starts inside the unit that ends at seq ${unitEnd}`)
      unitEnd = seq + (unit as number) - 1
    }
    try {
      session.restore(event as Parameters<Session['restore']>[0])
    } catch (error) {
      throw fail((error as Error).message)
    }
  }
  if (unitEnd >= session.length) {
    throw new SessionError(
      'CORRUPT',
      `session ${id} in ${where}: the rows end at seq ${session.length - 1} inside a unit that ends at seq ` +
        `${unitEnd}; the session was not opened and nothing was changed`,
    )
  }
  return session
}
