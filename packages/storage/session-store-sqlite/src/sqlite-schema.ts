import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { SessionError } from '@warmfold/session'
import Database from 'libsql'
import { readOnlyDatabase } from './read-only-database.ts'

/** The schema this code writes and reads (`PRAGMA user_version`). */
export const SCHEMA_VERSION = 1

/** A libsql (better-sqlite3-style, synchronous) connection. */
export type SqliteDatabase = InstanceType<typeof Database>

/**
 * The tables, by version: entry `n - 1` migrates version `n - 1` to `n`. Applied in order by
 * {@link openDatabase}, each in the same transaction as the new `user_version`.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sessions (
     id TEXT PRIMARY KEY NOT NULL,
     created INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE events (
     session_id TEXT NOT NULL REFERENCES sessions(id),
     seq INTEGER NOT NULL,
     event TEXT NOT NULL,
     PRIMARY KEY (session_id, seq)
   ) WITHOUT ROWID;
   CREATE TABLE holders (
     session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id),
     token TEXT NOT NULL,
     pid INTEGER NOT NULL,
     hostname TEXT NOT NULL,
     boot TEXT,
     start INTEGER,
     since INTEGER NOT NULL
   ) WITHOUT ROWID;`,
]

/**
 * Opens (creating it and its folder when missing) the database at `path` in WAL mode with
 * `synchronous = FULL`, so a committed transaction is on disk when `COMMIT` returns, and
 * brings its schema up to {@link SCHEMA_VERSION}. A database written by newer code is refused
 * before anything is changed.
 */
export function openDatabase(path: string): SqliteDatabase {
  try {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  } catch (error) {
    throw cannotOpen(path, error)
  }
  return connect(path, (db) => {
    db.exec('PRAGMA journal_mode = WAL')
    db.exec('PRAGMA synchronous = FULL')
    db.exec('PRAGMA foreign_keys = ON')
    migrate(db, path)
    checkWritable(db)
  })
}

/**
 * SQLite opens a file this process may not write read-only without a word, and in WAL mode even
 * begins a write transaction on it: only the first write fails. A rolled-back write of the schema
 * version (the value it has) asks now, so a read-only database is refused at open (as read-only,
 * by `connect`), never later by a flush or a writer row.
 */
function checkWritable(db: SqliteDatabase): void {
  db.exec('BEGIN IMMEDIATE')
  try {
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`)
  } finally {
    db.exec('ROLLBACK')
  }
}

/**
 * A connection to `target` (the database `path`, or an SQLite `file:` URI naming it) that waits
 * for other processes' (short) transactions, set up by `prepare`; closed again when `prepare`
 * throws. Engine errors become `IO` naming the path: a file that is not an SQLite database
 * (SQLITE_NOTADB) fails at the first statement, a database this process cannot write fails as
 * read-only when `prepare` writes.
 */
export function connect(path: string, prepare: (db: SqliteDatabase) => void, target = path): SqliteDatabase {
  let db: SqliteDatabase
  try {
    db = new Database(target)
  } catch (error) {
    throw cannotOpen(path, error)
  }
  try {
    db.exec('PRAGMA busy_timeout = 10000')
    prepare(db)
    return db
  } catch (error) {
    db.close()
    throw SessionError.isInstance(error) ? error : cannotOpen(path, error)
  }
}

/** The schema version a database says it has, for a reader that must not write (see `openForReading`). */
export function checkReadableSchema(db: SqliteDatabase, path: string): void {
  const found = userVersion(db)
  if (found > SCHEMA_VERSION) throw newerSchema(path, found)
  if (found < SCHEMA_VERSION)
    throw new SessionError(
      'NOT_FOUND',
      `${path} is an SQLite database without warmfold's session tables (schema version ${found}); it holds no sessions`,
    )
}

function newerSchema(path: string, found: number): SessionError {
  return new SessionError(
    'IO',
    `the SQLite session store ${path} has schema version ${found}, newer than version ${SCHEMA_VERSION} that this ` +
      `@warmfold/session-store-sqlite understands; ` +
      'upgrade the package (the database was not changed)',
  )
}

/**
 * `IO` naming the database and the engine's reason (its code too, e.g. SQLITE_NOTADB), or why it
 * is read-only when the engine refused to write; the error is the `cause`.
 */
export function cannotOpen(path: string, error: unknown): SessionError {
  const readOnly = readOnlyDatabase(path, error)
  if (readOnly) return readOnly
  const code = (error as { code?: unknown }).code
  const message = (error as Error).message
  const reason = `${message}${typeof code === 'string' && !message.includes(code) ? ` (${code})` : ''}`
  return new SessionError('IO', `cannot open the SQLite session store ${path}: ${reason}; nothing was changed`, {
    cause: error,
  })
}

function userVersion(db: SqliteDatabase): number {
  return Number((db.prepare('PRAGMA user_version').raw().get() as unknown[])[0])
}

function migrate(db: SqliteDatabase, path: string): void {
  if (userVersion(db) === SCHEMA_VERSION) return
  writeTransaction(db, () => {
    // Read again under the write lock: another process may have migrated meanwhile.
    const found = userVersion(db)
    if (found > SCHEMA_VERSION) throw newerSchema(path, found)
    for (let version = found; version < SCHEMA_VERSION; version++) db.exec(MIGRATIONS[version] as string)
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`)
  })
}

/** Runs `work` in a `BEGIN IMMEDIATE` transaction (the write lock is taken up front) and commits. */
export function writeTransaction<T>(db: SqliteDatabase, work: () => T): T {
  db.exec('BEGIN IMMEDIATE')
  try {
    const result = work()
    db.exec('COMMIT')
    return result
  } catch (error) {
    // A failed COMMIT (disk full, I/O error) leaves the transaction open: undo all of it.
    if (db.inTransaction) db.exec('ROLLBACK')
    throw error
  }
}
