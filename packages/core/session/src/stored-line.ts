import { canonicalJson } from '@warmfold/llm'
import type { Session } from './session.ts'

/**
 * The lines a store writes for events `from..end-1` of `session`: each event's canonical JSON,
 * the first event of a unit of two or more marked `"unit": n` (see `Session.unit`). Every store
 * keeps these same lines, so a session moves between stores byte for byte.
 */
export function storedLines(session: Session, from: number, end: number): string[] {
  const lines: string[] = []
  for (let seq = from; seq < end; seq++) {
    const event = session.eventAt(seq)
    const size = session.unitSizeAt(seq)
    lines.push(canonicalJson(size > 1 ? { ...event, unit: size } : event))
  }
  return lines
}

/** What is wrong with a stored line's `unit` mark (absent or a count of events), or `undefined`. */
const countOfEvents = (unit: unknown): string | undefined =>
  unit === undefined || (Number.isInteger(unit) && (unit as number) >= 1)
    ? undefined
    : `unit ${JSON.stringify(unit)} is not a count of events (an integer of at least 1)`

/**
 * Replays one stored line (see {@link storedLines}) into `session` with the live append rules:
 * its `unit` mark, or what is wrong with the line. `key`, when given, is the seq the store filed
 * the line under (an SQL row's), which the event must say too; `checkUnit` judges the unit mark
 * before the event is replayed (default: absent or a count of at least 1).
 */
export function restoreStoredLine(
  session: Session,
  text: string,
  key?: number,
  checkUnit = countOfEvents,
): { unit?: number } | string {
  let record: unknown
  try {
    record = JSON.parse(text)
  } catch (error) {
    return `not valid JSON (${(error as Error).message})`
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not an event object'
  const { seq, unit } = record as { seq?: unknown; unit?: unknown }
  if (key !== undefined && seq !== key) return `the event says seq ${JSON.stringify(seq)}`
  const badUnit = checkUnit(unit)
  if (badUnit !== undefined) return badUnit
  try {
    session.restore(record as Parameters<Session['restore']>[0])
  } catch (error) {
    return (error as Error).message
  }
  return unit === undefined ? {} : { unit: unit as number }
}
