import { closeSync, fsyncSync, openSync, unlinkSync } from 'node:fs'
import { open, readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describeNonFile, ensureDirectory, fsyncDirectory, writeAll } from './durable-fs.ts'
import { readSessionFile } from './read-session-file.ts'
import type { OpenOptions, SessionBackend, TornTailRepair } from './session-backend.ts'
import { SessionError } from './session-error.ts'
import { SessionLock } from './session-lock.ts'
import type { SessionOptions } from './session.ts'
import { Session } from './session.ts'
import { storedLines } from './stored-line.ts'

interface HeldFile {
  readonly file: string
  /** Append-mode descriptor; writes are synchronous so they can never reorder. */
  readonly fd: number
  readonly lock: SessionLock
  /** Events `0..flushed-1` are on disk. */
  flushed: number
  /** The file's last line lacks its newline; write one before the next event. */
  missingNewline: boolean
  /** Set when a write failed: the file may end in a partial line, so no further writes. */
  broken?: Error
}

/**
 * One JSONL file per session in `directory`: one canonical-JSON event per line, appended on
 * `flush` and fsync'd. A `<id>.jsonl.lock` file keeps a second writer out (see `SessionLock`).
 * The folder is created (mode 0700) on first use.
 *
 * Writes are synchronous on purpose: cordis does not await a service's async `stop()`, so the
 * final flush on unload must complete before `stop()` returns, and synchronous writes also rule
 * out two flushes of one session landing out of order.
 */
export class JsonlFileBackend implements SessionBackend {
  private readonly held = new Map<Session, HeldFile>()

  constructor(private readonly directory: string) {}

  /** The path of session `id`'s log. */
  fileOf(id: string): string {
    return join(this.directory, `${id}.jsonl`)
  }

  async create(id: string, options: SessionOptions): Promise<Session> {
    return this.locked(id, async (file, lock) => {
      let fd: number
      try {
        fd = openSync(file, 'wx')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        const other = describeNonFile(await stat(file))
        if (other) throw notAFile(id, file, other, error)
        throw new SessionError('EXISTS', `session ${id} already exists: ${file}`)
      }
      // The new file's name is part of the folder: make it durable before anything is acknowledged.
      fsyncDirectory(this.directory)
      const session = new Session(id, options)
      this.held.set(session, { file, fd, lock, flushed: 0, missingNewline: false })
      return session
    })
  }

  async open(
    id: string,
    options: OpenOptions & SessionOptions,
    onRepair: (repair: TornTailRepair) => void,
  ): Promise<Session> {
    return this.locked(id, async (file, lock) => {
      const content = await readSession(id, file)
      const read = readSessionFile(file, id, content, { ...options, allowTornTail: options.repairTornTail === true })
      if (read.tornTail) {
        const sidecar = `${file}.corrupt`
        const { offset, ...torn } = read.tornTail
        await moveTail(file, sidecar, content, offset, this.directory)
        onRepair({ sessionId: id, file, sidecar, ...torn })
      }
      this.held.set(read.session, {
        file,
        fd: openSync(file, 'a'),
        lock,
        flushed: read.session.length,
        missingNewline: read.missingNewline,
      })
      return read.session
    })
  }

  /** Runs `hold` with session `id`'s file locked (the folder created first); a throw releases the lock. */
  private async locked(id: string, hold: (file: string, lock: SessionLock) => Promise<Session>): Promise<Session> {
    await ensureDirectory(this.directory)
    const file = this.fileOf(id)
    const lock = await SessionLock.acquire(`${file}.lock`, id)
    try {
      return await hold(file, lock)
    } catch (error) {
      lock.releaseSync()
      throw error
    }
  }

  /**
   * The session's complete lines, read without its lock; a torn tail (never acknowledged)
   * is left out, and the file is not touched.
   */
  async read(id: string): Promise<Session> {
    const file = this.fileOf(id)
    const { session } = readSessionFile(file, id, await readSession(id, file), { allowTornTail: true })
    session.close()
    return session
  }

  async list(): Promise<string[]> {
    const names = await readdir(this.directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return []
      throw error
    })
    return names
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => name.slice(0, -'.jsonl'.length))
      .toSorted()
  }

  async flush(session: Session): Promise<void> {
    this.flushSync(session)
  }

  async release(session: Session): Promise<void> {
    this.releaseSync(session)
  }

  /** Flushes, closes the file and releases the lock, all before returning. */
  releaseSync(session: Session): void {
    const held = this.held.get(session)
    if (!held) return
    try {
      this.flushSync(session)
    } finally {
      session.close()
      this.held.delete(session)
      closeSync(held.fd)
      held.lock.releaseSync()
    }
  }

  /** Removes the session's file while its lock is still held, then closes it and releases the lock. */
  async delete(session: Session): Promise<void> {
    const held = this.held.get(session)
    if (!held) throw new SessionError('CLOSED', `session ${session.id} is not held by this store`)
    session.close()
    this.held.delete(session)
    try {
      closeSync(held.fd)
      unlinkSync(held.file)
      fsyncDirectory(this.directory)
    } catch (error) {
      throw new SessionError('IO', `session ${session.id}: deleting ${held.file} failed: ${(error as Error).message}`, {
        cause: error,
      })
    } finally {
      held.lock.releaseSync()
    }
  }

  /**
   * Writes every event before the open unit (if any) in one write and fsyncs. Returns only
   * when all those bytes are on disk; a short or failed write or fsync fails this flush and
   * every later one (the file may now end in a partial line, which a reopen treats as a torn
   * tail), so nothing is acknowledged that is not durable.
   */
  private flushSync(session: Session): void {
    const held = this.held.get(session)
    if (!held) throw new SessionError('CLOSED', `session ${session.id} is not held by this store`)
    if (held.broken) {
      throw new SessionError(
        'CLOSED',
        `session ${session.id}: an earlier write to ${held.file} failed (${held.broken.message}); refusing to ` +
          `append after a possibly partial line. Reopen the session (with { repairTornTail: true } if the file ends ` +
          `in a partial line).`,
      )
    }
    const end = session.settledLength
    if (end === held.flushed) return
    const text = `${held.missingNewline ? '\n' : ''}${storedLines(session, held.flushed, end).join('\n')}\n`
    try {
      writeAll(held.fd, Buffer.from(text, 'utf8'))
      fsyncSync(held.fd)
    } catch (error) {
      held.broken = error as Error
      throw new SessionError(
        'CLOSED',
        `session ${session.id}: writing events ${held.flushed}..${end - 1} to ${held.file} failed, none of them ` +
          `is acknowledged: ${(error as Error).message}`,
        { cause: error },
      )
    }
    held.flushed = end
    held.missingNewline = false
  }
}

/** Reads a session file; `NOT_FOUND` when it is missing, `IO` when something else is in its place. */
async function readSession(id: string, file: string): Promise<Buffer> {
  let found
  try {
    found = await stat(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new SessionError('NOT_FOUND', `session ${id} does not exist: no file ${file}`)
    throw error
  }
  const other = describeNonFile(found)
  if (other) throw notAFile(id, file, other)
  return readFile(file)
}

/**
 * Moves `content` from `offset` on to the end of `sidecar`, then cuts `file` there. The
 * sidecar and its folder entry are fsynced before the cut, so the moved bytes are never only
 * in memory.
 */
async function moveTail(
  file: string,
  sidecar: string,
  content: Buffer,
  offset: number,
  directory: string,
): Promise<void> {
  const out = await open(sidecar, 'a')
  try {
    await out.writeFile(content.subarray(offset))
    await out.sync()
  } finally {
    await out.close()
  }
  fsyncDirectory(directory)
  const handle = await open(file, 'r+')
  try {
    await handle.truncate(offset)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

function notAFile(id: string, file: string, what: string, cause?: unknown): SessionError {
  return new SessionError(
    'IO',
    `session ${id}: ${file} is ${what}, not a session file; move it away to use this session id`,
    cause === undefined ? undefined : { cause },
  )
}
