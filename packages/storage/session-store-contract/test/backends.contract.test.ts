import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { JsonlFileBackend, MemoryBackend } from '@warmfold/session'
import { SqliteSessionBackend } from '@warmfold/session-store-sqlite'
import Database from 'libsql'
import type { BackendHarness } from '../src/index.ts'
import { describeBackendContract } from '../src/index.ts'
import { tornFileWrite, tornSqlWrite } from './torn-write.ts'

/** The packages a contract child (src/contract-child.ts, in this package) imports its backend factory from. */
const SESSION = '@warmfold/session'
const SQLITE = '@warmfold/session-store-sqlite'

function temporary(prefix: string): { directory: string; cleanup(): Promise<void> } {
  const directory = mkdtempSync(join(tmpdir(), prefix))
  return { directory, cleanup: async () => rmSync(directory, { recursive: true, force: true }) }
}

const memory: BackendHarness = {
  sharedStorage: false,
  multiProcess: false,
  async fresh() {
    const backend = new MemoryBackend()
    return { backend: () => backend, sharedStorage: false, cleanup: async () => {} }
  },
}

const jsonl: BackendHarness = {
  sharedStorage: true,
  multiProcess: true,
  tornWrites: true,
  async fresh() {
    const { directory, cleanup } = temporary('warmfold-contract-jsonl-')
    return {
      backend: () => new JsonlFileBackend(directory),
      sharedStorage: true,
      child: { module: SESSION, factory: 'JsonlFileBackend', args: [directory], construct: true },
      tornWrite: async (id, _from, lines) => tornFileWrite(new JsonlFileBackend(directory).fileOf(id), lines),
      cleanup,
    }
  },
}

const sqlite: BackendHarness = {
  sharedStorage: true,
  multiProcess: true,
  midFlushProbe: true,
  tornWrites: true,
  async fresh() {
    const { directory, cleanup } = temporary('warmfold-contract-sqlite-')
    const path = join(directory, 'sessions.db')
    let probe: InstanceType<typeof Database> | undefined
    return {
      backend: () => new SqliteSessionBackend({ path }),
      sharedStorage: true,
      child: { module: SQLITE, factory: 'sqliteSessionStore', args: [{ path }] },
      writeInProgress: async () => sqliteWriteLocked((probe ??= new Database(path))),
      tornWrite: (id, from, lines) => tornSqlWrite('sqlite', path, id, from, lines),
      async cleanup() {
        probe?.close()
        await cleanup()
      },
    }
  },
}

/**
 * Whether another connection holds the database's write lock (WAL has one writer): a
 * `BEGIN IMMEDIATE` that does not wait fails with SQLITE_BUSY. The store's writes are all
 * `BEGIN IMMEDIATE` transactions, so the lock is held exactly inside one.
 */
function sqliteWriteLocked(db: InstanceType<typeof Database>): boolean {
  db.exec('PRAGMA busy_timeout = 0')
  try {
    db.exec('BEGIN IMMEDIATE')
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return true
    throw error
  }
  db.exec('ROLLBACK')
  return false
}

describeBackendContract('memory', memory)
describeBackendContract('JSONL file', jsonl)
describeBackendContract('SQLite', sqlite)
