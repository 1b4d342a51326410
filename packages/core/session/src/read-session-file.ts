import type { TornTailRepair } from './session-backend.ts'
import { SessionError } from './session-error.ts'
import type { SessionOptions } from './session.ts'
import { Session } from './session.ts'
import { restoreStoredLine } from './stored-line.ts'

/** What a torn tail holds: the bytes from `offset` on, starting at 1-based `line` (see `TornTailRepair`). */
export type TornTail = Pick<TornTailRepair, 'line' | 'bytes' | 'droppedEvents'> & { readonly offset: number }

/** The result of replaying a session file. */
export interface ReadSessionFile {
  readonly session: Session
  /** The torn tail, when there is one and the caller allowed it. */
  readonly tornTail?: TornTail
  /** Whether the last stored line is complete but lacks its newline. */
  readonly missingNewline: boolean
}

/** A unit whose first line was read but not yet all of its events. */
interface OpenUnit {
  readonly line: number
  readonly offset: number
  readonly size: number
  readonly lastSeq: number
}

/**
 * Replays the JSONL text of a session file into a new `Session`, validating every line with
 * the same rules as a live append.
 *
 * A bad line anywhere fails with `SessionError('CORRUPT')` naming `file:line`. The tail is
 * torn when the last line has no newline and does not parse or validate, or when the file
 * ends inside a unit (a line whose `unit: n` says it and the next `n - 1` events were written
 * together). A torn tail is an error (`TORN_TAIL`) unless `allowTornTail`; then it is left
 * out (a whole unfinished unit, never a part of one) and described.
 */
export function readSessionFile(
  file: string,
  id: string,
  content: Buffer,
  options: SessionOptions & { allowTornTail: boolean },
): ReadSessionFile {
  const session = new Session(id, options)
  let offset = 0
  let line = 0
  let unit: OpenUnit | undefined
  /**
   * The file ends inside `unit`: the tail from the unit's first line on is torn. The events of
   * the unit already replayed cannot be taken back from a session, so the part before the unit
   * is replayed again into a fresh one (this only happens on a damaged file).
   */
  const tornUnit = ({ line, offset, size, lastSeq }: OpenUnit, cut: string): ReadSessionFile => {
    const bytes = content.length - offset
    const first = lastSeq - size + 1
    if (!options.allowTornTail) {
      throw new SessionError(
        'TORN_TAIL',
        `${file}:${line}: the unit of ${size} events written together from this line (seq ` +
          `${first}..${lastSeq}) is cut short by ${cut}, most likely a crash mid-write; the session was not ` +
          `opened. Open it with { repairTornTail: true } to move the whole unit (${bytes} bytes) to ${file}.corrupt ` +
          `and continue from line ${line - 1}.`,
      )
    }
    const before = readSessionFile(file, id, content.subarray(0, offset), { ...options, allowTornTail: false })
    const tornTail = { line, offset, bytes, droppedEvents: session.length - first }
    return { session: before.session, tornTail, missingNewline: before.missingNewline }
  }
  while (offset < content.length) {
    line += 1
    const newline = content.indexOf(0x0a, offset)
    const end = newline === -1 ? content.length : newline
    const text = content.subarray(offset, end).toString('utf8')
    const replayed = replayLine(session, text)
    if (typeof replayed === 'string') {
      if (newline !== -1)
        throw new SessionError(
          'CORRUPT',
          `${file}:${line}: ${replayed}; the session was not opened and the file was not changed`,
        )
      if (unit) return tornUnit(unit, `a torn line ${line} of ${end - offset} bytes (${replayed})`)
      if (!options.allowTornTail) {
        throw new SessionError(
          'TORN_TAIL',
          `${file}:${line}: the last line is incomplete (${end - offset} bytes without a newline: ${replayed}), ` +
            `most likely a crash mid-write; the session was not opened. Open it with { repairTornTail: true } to ` +
            `move those bytes to ${file}.corrupt and continue from line ${line - 1}.`,
        )
      }
      return { session, tornTail: { line, offset, bytes: end - offset }, missingNewline: false }
    }
    if (replayed.unit !== undefined) {
      if (unit) {
        throw new SessionError(
          'CORRUPT',
          `${file}:${line}: a unit of ${replayed.unit} events starts while the unit of ${unit.size} from line ` +
            `${unit.line} is unfinished; the session was not opened and the file was not changed`,
        )
      }
      if (replayed.unit > 1) unit = { line, offset, size: replayed.unit, lastSeq: replayed.seq + replayed.unit - 1 }
    } else if (unit && replayed.seq === unit.lastSeq) {
      unit = undefined
    }
    if (newline === -1) return unit ? tornUnit(unit, 'the end of the file') : { session, missingNewline: true }
    offset = newline + 1
  }
  return unit ? tornUnit(unit, 'the end of the file') : { session, missingNewline: false }
}

/** Replays one line: its seq and unit size, or what is wrong with it. */
function replayLine(session: Session, text: string): { seq: number; unit?: number } | string {
  if (text.trim() === '') return 'empty line'
  const replayed = restoreStoredLine(session, text)
  return typeof replayed === 'string' ? replayed : { seq: session.length - 1, ...replayed }
}
