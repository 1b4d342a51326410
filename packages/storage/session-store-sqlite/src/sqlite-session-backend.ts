import { resolve } from 'node:path'
import type { OpenOptions, SessionBackend, SessionOptions } from '@warmfold/session'
import { Session, SessionError, storedLines } from '@warmfold/session'
import { DatabaseFiles } from './database-files.ts'
import { checkHolder, dropHolder, takeHolder } from './session-holder.ts'
import type { SqliteDatabase } from './sqlite-schema.ts'
import { cannotOpen, openDatabase, writeTransaction } from './sqlite-schema.ts'
import { openForReading } from './open-for-reading.ts'
import { assertStored, isStored, replayRows } from './replay-rows.ts'

/** Options of {@link sqliteSessionStore}. */
export interface SqliteSessionStoreOptions {
  /** The database file, resolved against the working directory; created (with its folder, mode 0700) on first use. */
  path: string
}

interface HeldSession {
  /** This store's writer row token (fencing: every flush checks it). */
  readonly token: string
  /** Events `0..flushed-1` are committed. */
  flushed: number
  /** Set when a flush failed: nothing of it was committed, and no later flush is tried until reopen. */
  broken?: Error
}

/**
 * Sessions in one SQLite database file (libsql, WAL, `synchronous = FULL`): a row per event in
 * `events(session_id, seq, event)` holding the same canonical JSON line as the JSONL store,
 * one committed transaction per flush, and a writer row per held session in `holders` that
 * refuses a second writer with `LOCKED`. The engine is synchronous, so `releaseSync` finishes
 * the final flush on unload. The connection is opened on first use and closed when the store
 * holds no session.
 */
export class SqliteSessionBackend implements SessionBackend {
  /** The absolute database path. */
  readonly path: string
  private db?: SqliteDatabase
  /** The files `db` opened: every write checks the path still names them. */
  private files?: DatabaseFiles
  private readonly held = new Map<Session, HeldSession>()

  constructor(options: SqliteSessionStoreOptions) {
    if (typeof options?.path !== 'string' || options.path === '')
      throw new TypeError(`sqliteSessionStore: path must be a non-empty string, got ${JSON.stringify(options?.path)}`)
    this.path = resolve(options.path)
  }

  async create(id: string, options: SessionOptions): Promise<Session> {
    const { db, files } = this.connection()
    try {
      const token = writeTransaction(db, () => {
        files.checkBeforeWrite()
        if (isStored(db, id)) throw new SessionError('EXISTS', `session ${id} already exists in ${this.path}`)
        db.prepare('INSERT INTO sessions (id, created) VALUES (?, ?)').run(id, Date.now())
        return takeHolder(db, this.path, id)
      })
      files.checkSameFiles()
      const session = new Session(id, options)
      this.held.set(session, { token, flushed: 0 })
      return session
    } catch (error) {
      this.closeIfIdle()
      throw SessionError.isInstance(error) ? error : cannotOpen(this.path, error)
    }
  }

  async open(id: string, options: OpenOptions & SessionOptions): Promise<Session> {
    const { db, files } = this.connection()
    let token: string | undefined
    try {
      token = writeTransaction(db, () => {
        files.checkBeforeWrite()
        assertStored(db, this.path, id)
        return takeHolder(db, this.path, id)
      })
      files.checkSameFiles()
      const session = replayRows(db, this.path, id, options)
      this.held.set(session, { token, flushed: session.length })
      return session
    } catch (error) {
      if (token !== undefined) dropHolder(db, id, token)
      this.closeIfIdle()
      throw SessionError.isInstance(error) ? error : cannotOpen(this.path, error)
    }
  }

  /**
   * Reads session `id` as committed now, on a read-only connection of its own in one read
   * transaction: no writer row is taken (a writer at work is not disturbed), no database, folder
   * or schema is created, and no write access is needed (see `openForReading`).
   */
  async read(id: string): Promise<Session> {
    const { db, checkUnchanged } = openForReading(this.path)
    try {
      db.exec('BEGIN')
      try {
        assertStored(db, this.path, id)
        const session = replayRows(db, this.path, id, {})
        session.close()
        checkUnchanged()
        return session
      } finally {
        db.exec('COMMIT')
      }
    } finally {
      db.close()
    }
  }

  async list(): Promise<string[]> {
    const { db, files } = this.connection()
    try {
      // A connection whose file was deleted or replaced would list what nobody else sees.
      files.checkSameFiles()
      return (db.prepare('SELECT id FROM sessions ORDER BY id').raw().all() as [string][]).map(([id]) => id).toSorted()
    } finally {
      this.closeIfIdle()
    }
  }

  async flush(session: Session): Promise<void> {
    this.flushSync(session)
  }

  async release(session: Session): Promise<void> {
    this.releaseSync(session)
  }

  /** Flushes, drops the writer row and (when no session is left) closes the connection, all before returning. */
  releaseSync(session: Session): void {
    const held = this.held.get(session)
    if (!held) return
    try {
      this.flushSync(session)
    } finally {
      session.close()
      this.held.delete(session)
      try {
        if (this.db) dropHolder(this.db, session.id, held.token)
      } finally {
        this.closeIfIdle()
      }
    }
  }

  /** Deletes the session's rows (events, writer row, session) in one transaction while it still holds them. */
  async delete(session: Session): Promise<void> {
    const held = this.held.get(session)
    if (!held || !this.db)
      throw new SessionError('CLOSED', `session ${session.id} is not held by the SQLite store ${this.path}`)
    session.close()
    this.held.delete(session)
    const { db, files } = this.connection()
    try {
      writeTransaction(db, () => {
        files.checkBeforeWrite()
        checkHolder(db, this.path, session.id, held.token)
        for (const table of ['events', 'holders'])
          db.prepare(`DELETE FROM ${table} WHERE session_id = ?`).run(session.id)
        db.prepare('DELETE FROM sessions WHERE id = ?').run(session.id)
      })
    } catch (error) {
      // Nothing was deleted; the session stays stored, and no longer held by this store.
      try {
        dropHolder(db, session.id, held.token)
      } catch {
        // A writer row that cannot be dropped now is taken over once this process is gone.
      }
      if (SessionError.isInstance(error)) throw error
      throw new SessionError(
        'IO',
        `session ${session.id}: deleting it from ${this.path} failed, nothing was deleted: ${(error as Error).message}`,
        { cause: error },
      )
    } finally {
      this.closeIfIdle()
    }
  }

  /**
   * Inserts every event before the open unit (if any) in one `BEGIN IMMEDIATE … COMMIT`, after
   * checking this store still holds the writer row. Returns once `COMMIT` returned (WAL,
   * `synchronous = FULL`: fsynced). A failed transaction is rolled back whole, acknowledges
   * nothing, and every later flush of the session is refused until it is reopened.
   */
  private flushSync(session: Session): void {
    const held = this.held.get(session)
    if (!held || !this.db)
      throw new SessionError('CLOSED', `session ${session.id} is not held by the SQLite store ${this.path}`)
    if (held.broken) {
      throw new SessionError(
        'CLOSED',
        `session ${session.id}: an earlier flush to ${this.path} failed (${held.broken.message}); none of it was ` +
          `acknowledged. Reopen the session to continue.`,
      )
    }
    const end = session.settledLength
    if (end === held.flushed) return
    const { db, files } = this.connection()
    try {
      writeTransaction(db, () => {
        files.checkBeforeWrite()
        checkHolder(db, this.path, session.id, held.token)
        const insert = db.prepare('INSERT INTO events (session_id, seq, event) VALUES (?, ?, ?)')
        storedLines(session, held.flushed, end).forEach((line, index) =>
          insert.run(session.id, held.flushed + index, line),
        )
      })
      // Committed, but acknowledged only if it went to the files the path names.
      files.checkSameFiles()
    } catch (error) {
      held.broken = error as Error
      const code =
        SessionError.isInstance(error) && (error.code === 'LOCKED' || error.code === 'IO') ? error.code : 'CLOSED'
      throw new SessionError(
        code,
        `session ${session.id}: committing events ${held.flushed}..${end - 1} to ${this.path} failed, none of ` +
          `them is acknowledged: ${(error as Error).message}`,
        { cause: error },
      )
    }
    held.flushed = end
  }

  private connection(): { db: SqliteDatabase; files: DatabaseFiles } {
    if (!this.db || !this.files) {
      const db = openDatabase(this.path)
      try {
        this.files = DatabaseFiles.observe(this.path)
      } catch (error) {
        db.close()
        throw error
      }
      this.db = db
    }
    return { db: this.db, files: this.files }
  }

  private closeIfIdle(): void {
    if (this.held.size > 0 || !this.db) return
    this.db.close()
    this.db = undefined
    this.files = undefined
  }
}

/**
 * The SQLite session store for `SessionStore`'s `store` option:
 * `ctx.plugin(SessionStore, { store: sqliteSessionStore({ path: '.warmfold/sessions.db' }) })`.
 */
export function sqliteSessionStore(options: SqliteSessionStoreOptions): SqliteSessionBackend {
  return new SqliteSessionBackend(options)
}
