import type { SessionOptions } from '@warmfold/session'
import { restoreStoredLine, Session, SessionError } from '@warmfold/session'

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
    const replayed = restoreStoredLine(session, row.event, seq, (unit) => {
      if (unit === undefined) return undefined
      if (!Number.isInteger(unit) || (unit as number) < 2)
        return `unit ${JSON.stringify(unit)} is not a count of 2 or more events`
      return seq <= unitEnd ? `a unit starts inside the unit that ends at seq ${unitEnd}` : undefined
    })
    if (typeof replayed === 'string') {
      throw new SessionError(
        'CORRUPT',
        `session ${id} in ${where}: event row seq ${seq}: ${replayed}; the session was not opened and nothing was ` +
          'changed',
      )
    }
    if (replayed.unit !== undefined) unitEnd = seq + replayed.unit - 1
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
