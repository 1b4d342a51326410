import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs'
import { appendFile, mkdir, open, readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { canonicalJson } from '@warmfold/llm'
import { readSessionFile } from './read-session-file.ts'
import type { OpenOptions, SessionBackend, TornTailRepair } from './session-backend.ts'
import { SessionError } from './session-error.ts'
import { SessionLock } from './session-lock.ts'
import type { SessionOptions } from './session.ts'
import { Session } from './session.ts'

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
 * `flush` and fsync'd. A `<id>.jsonl.lock` file keeps a second writer out.
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
    await mkdir(this.directory, { recursive: true })
    const file = this.fileOf(id)
    const lock = await SessionLock.acquire(`${file}.lock`, id)
    let fd: number
    try {
      fd = openSync(file, 'wx')
    } catch (error) {
      await lock.release()
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new SessionError('EXISTS', `session ${id} already exists: ${file}`)
      throw error
    }
    const session = new Session(id, options)
    this.held.set(session, { file, fd, lock, flushed: 0, missingNewline: false })
    return session
  }

  async open(id: string, options: OpenOptions & SessionOptions, onRepair: (repair: TornTailRepair) => void): Promise<Session> {
    const file = this.fileOf(id)
    const lock = await SessionLock.acquire(`${file}.lock`, id)
    try {
      let content: Buffer
      try {
        content = await readFile(file)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          throw new SessionError('NOT_FOUND', `session ${id} does not exist: no file ${file}`)
        }
        throw error
      }
      const read = readSessionFile(file, id, content, { ...options, allowTornTail: options.repairTornTail === true })
      const handle = await open(file, 'r+')
      if (read.tornTail) {
        const sidecar = `${file}.corrupt`
        await appendFile(sidecar, content.subarray(read.tornTail.offset))
        await handle.truncate(read.tornTail.offset)
        await handle.sync()
        onRepair({ sessionId: id, file, sidecar, line: read.tornTail.line, bytes: read.tornTail.bytes })
      }
      await handle.close()
      this.held.set(read.session, { file, fd: openSync(file, 'a'), lock, flushed: read.session.length, missingNewline: read.missingNewline })
      return read.session
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  async list(): Promise<string[]> {
    let names: string[]
    try {
      names = await readdir(this.directory)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
    return names.filter((name) => name.endsWith('.jsonl')).map((name) => name.slice(0, -'.jsonl'.length)).toSorted()
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

  private flushSync(session: Session): void {
    const held = this.held.get(session)
    if (!held) throw new SessionError('CLOSED', `session ${session.id} is not held by this store`)
    if (held.broken) {
      throw new SessionError('CLOSED', `session ${session.id}: an earlier write to ${held.file} failed (${held.broken.message}); refusing to append after a possibly partial line`)
    }
    const end = session.length
    if (end === held.flushed) return
    let text = held.missingNewline ? '\n' : ''
    for (let seq = held.flushed; seq < end; seq++) text += `${canonicalJson(session.eventAt(seq))}\n`
    try {
      writeSync(held.fd, text)
      fsyncSync(held.fd)
    } catch (error) {
      held.broken = error as Error
      throw new SessionError('CLOSED', `session ${session.id}: writing ${held.file} failed: ${(error as Error).message}`, { cause: error })
    }
    held.flushed = end
    held.missingNewline = false
  }
}
