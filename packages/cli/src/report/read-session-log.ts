import { readFile, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import type { AnySessionEvent } from '@warmfold/session'
import { readSessionFile, SessionError } from '@warmfold/session'
import { RunError } from '../shared/run-error.ts'
import { UsageError } from '../shared/usage-error.ts'

/** The first 16 bytes of every SQLite 3 database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\u0000', 'latin1')

/** The UTF-8 byte order mark. */
const UTF8_BOM_BYTES = Buffer.from([0xef, 0xbb, 0xbf])

/** A session log, read from its file or from a session store. */
export interface SessionLog {
  /** Where it was read, for a person: the file, or the store (`sqlite:PATH`, `postgres:URL` without its password). */
  readonly file: string
  /** The session's id (for a file: its name without `.jsonl`). */
  readonly sessionId: string
  /** Every event, in order; event `seq` is on line `seq + 1` (of the file, or of the session exported as one). */
  readonly events: readonly AnySessionEvent[]
  /** Where event `seq` is, for a message: `FILE:LINE`, or the store, session and seq. */
  locate(seq: number): string
  /** What a reader of the report needs to know about where the log came from. */
  readonly notes?: readonly string[]
}

/**
 * Reads a session log written by the session file store and replays it with the store's own
 * reader, so every line is validated exactly as `ctx.sessions.open` would. The file is only read:
 * a lock held by a running host does not matter, and nothing is repaired.
 * @throws UsageError when `file` does not exist, is not a file or is an SQLite database (the
 *   message says to read it with `--store sqlite:`); RunError naming the file and
 *   line when a line is not a valid event, or when the last line (or a unit of events written
 *   together) is cut short, as a crash mid-write or a writer still at work leaves it.
 */
export async function readSessionLog(file: string): Promise<SessionLog> {
  const found = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR')
      throw new UsageError(`session log ${JSON.stringify(file)} does not exist`)
    throw new RunError(`session log ${JSON.stringify(file)} cannot be read: ${error.message}`)
  })
  if (!found.isFile())
    throw new UsageError(`session log ${JSON.stringify(file)} is not a file; name a session's .jsonl file`)
  let content = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new RunError(`session log ${JSON.stringify(file)} cannot be read: ${error.code ?? error.message}`)
  })
  // An SQLite file opens with this header; given as a log it would fail as "not valid JSON" on line 1.
  if (content.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER))
    throw new UsageError(
      `${JSON.stringify(file)} is an SQLite database, not a JSONL session log: use warmfold report --store ` +
        `sqlite:${file} SESSION_ID`,
    )
  const sessionId = basename(file).replace(/\.jsonl$/, '')
  // An editor that saved the log may have added a byte order mark; the store writes none. It is
  // not part of line 1, so line numbers stay, and the report says it skipped it.
  const bom = content.subarray(0, UTF8_BOM_BYTES.length).equals(UTF8_BOM_BYTES)
  if (bom) content = content.subarray(UTF8_BOM_BYTES.length)
  let read
  try {
    // The torn tail is let through only to be described here: the store's message tells how to
    // repair the file through its API, and the report never changes the file.
    read = readSessionFile(file, sessionId, content, { allowTornTail: true })
  } catch (error) {
    if (SessionError.isInstance(error) && error.code === 'CORRUPT')
      throw new RunError(`cannot report ${error.message}`, { cause: error })
    throw error
  }
  if (read.tornTail) {
    const { line, bytes, droppedEvents } = read.tornTail
    const what =
      droppedEvents === undefined
        ? `the last line is incomplete (${bytes} bytes without a newline)`
        : `the file ends inside a group of events written together from this line (${droppedEvents} complete ` +
          `event(s) of it, ${bytes} bytes)`
    throw new RunError(
      `cannot report ${file}:${line}: ${what}: the writer crashed mid-write or is still writing. Nothing is ` +
        `reported from a torn log; report it once its writer has ended, or open it with the session store's ` +
        'repairTornTail to set the torn bytes aside.',
    )
  }
  return {
    file,
    sessionId,
    events: read.session.events,
    locate: (seq) => `${file}:${seq + 1}`,
    notes: bom
      ? [
          `${file} starts with a UTF-8 byte order mark, which the report skipped; the session store writes none, ` +
            'and a host opening this file would refuse line 1 until the mark (its first 3 bytes) is removed.',
        ]
      : [],
  }
}
