import { existsSync, statSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { SessionError } from '@warmfold/session'
import { cannotWriteCode } from './read-only-database.ts'
import type { SqliteDatabase } from './sqlite-schema.ts'
import { checkReadableSchema, connect } from './sqlite-schema.ts'

/** A connection that only reads, and how to tell whether what it read still stands. */
export interface ReadingConnection {
  readonly db: SqliteDatabase
  /** Call after reading: `IO` when the database was read as an unchanging file and changed meanwhile. */
  checkUnchanged(): void
}

/**
 * Opens the existing database at `path` to read it, changing nothing and needing no write
 * access to it: no file, folder or schema is created (`NOT_FOUND` when there is no database
 * there, or one without warmfold's tables), and a newer schema is refused as by `openDatabase`.
 *
 * The connection is read-only (SQLite's `mode=ro`), so a database file this process cannot write
 * (mode 0444, a copy, a read-only mount) reads like any other, beside a running writer too. A
 * database in WAL mode also needs its `-shm` index, which SQLite creates beside it when missing;
 * in a folder this process cannot write, that is impossible. Then, when there is no `-wal` or an
 * empty one, every committed transaction is in the database file itself, which is read as an
 * unchanging file (`immutable=1`) and checked to be unchanged afterwards. A `-wal` holding
 * transactions without an index that can be made is `IO` saying so: reading around it would
 * silently leave those transactions out.
 */
export function openForReading(path: string): ReadingConnection {
  if (!existsSync(path)) throw new SessionError('NOT_FOUND', `there is no SQLite session store at ${path}`)
  const uri = pathToFileURL(path).href
  try {
    return { db: connect(path, (db) => checkReadableSchema(db, path), `${uri}?mode=ro`), checkUnchanged: () => {} }
  } catch (error) {
    // A WAL database whose `-shm` index cannot be created fails as read-only or as not openable.
    if (!SessionError.isInstance(error) || cannotWriteCode(error.cause) === undefined) throw error
    const wal = sizeOf(`${path}-wal`)
    if (wal > 0) {
      throw new SessionError(
        'IO',
        `cannot read the SQLite session store ${path}: its write-ahead log ${path}-wal holds ${wal} bytes of ` +
          `transactions, but SQLite cannot create the index ${path}-shm it needs to read them ` +
          `(${(error.cause as Error).message}); copy the database together with its -wal into a folder this process ` +
          `can write, or read it where it was written`,
        { cause: error.cause },
      )
    }
    const before = fingerprint(path)
    const db = connect(path, (connection) => checkReadableSchema(connection, path), `${uri}?immutable=1`)
    return {
      db,
      checkUnchanged() {
        if (fingerprint(path) === before && sizeOf(`${path}-wal`) === 0) return
        throw new SessionError(
          'IO',
          `the SQLite session store ${path} changed while it was read (a writer started); read it again`,
        )
      },
    }
  }
}

/** The size of `file`, 0 when there is none. */
function sizeOf(file: string): number {
  return existsSync(file) ? statSync(file).size : 0
}

/** What changes when a file is written or replaced: device, inode, size and modification time. */
function fingerprint(file: string): string {
  const stats = statSync(file, { bigint: true })
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`
}
