import { SessionError } from './session-error.ts'
import type { SessionOptions } from './session.ts'
import { Session } from './session.ts'

/** The result of replaying a session file. */
export interface ReadSessionFile {
  readonly session: Session
  /** The torn last line, when there is one and the caller allowed it. */
  readonly tornTail?: { readonly line: number; readonly offset: number; readonly bytes: number }
  /** Whether the last stored line is complete but lacks its newline. */
  readonly missingNewline: boolean
}

/**
 * Replays the JSONL text of a session file into a new `Session`, validating every line with
 * the same rules as a live append.
 *
 * A bad line anywhere fails with `SessionError('CORRUPT')` naming `file:line`. A last line
 * without a newline that does not parse or validate is a torn tail: an error
 * (`TORN_TAIL`) unless `allowTornTail`, in which case it is left out and described.
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
  while (offset < content.length) {
    line += 1
    const newline = content.indexOf(0x0a, offset)
    const end = newline === -1 ? content.length : newline
    const text = content.subarray(offset, end).toString('utf8')
    const problem = replayLine(session, text)
    if (problem !== undefined) {
      if (newline !== -1) throw new SessionError('CORRUPT', `${file}:${line}: ${problem}; the session was not opened and the file was not changed`)
      if (!options.allowTornTail) {
        throw new SessionError(
          'TORN_TAIL',
          `${file}:${line}: the last line is incomplete (${end - offset} bytes without a newline: ${problem}), most likely a crash mid-write; ` +
            `the session was not opened. Open it with { repairTornTail: true } to move those bytes to ${file}.corrupt and continue from line ${line - 1}.`,
        )
      }
      return { session, tornTail: { line, offset, bytes: end - offset }, missingNewline: false }
    }
    if (newline === -1) return { session, missingNewline: true }
    offset = newline + 1
  }
  return { session, missingNewline: false }
}

function replayLine(session: Session, text: string): string | undefined {
  if (text.trim() === '') return 'empty line'
  let record: unknown
  try {
    record = JSON.parse(text)
  } catch (error) {
    return `not valid JSON (${(error as Error).message})`
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not an event object'
  try {
    session.restore(record as Parameters<Session['restore']>[0])
  } catch (error) {
    return (error as Error).message
  }
  return undefined
}
