import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { JsonlFileBackend, MemoryBackend } from '@warmfold/session'
import { SqliteSessionBackend } from '@warmfold/session-store-sqlite'
import type { BackendHarness } from '../src/index.ts'
import { describeBackendContract } from '../src/index.ts'

/** Module paths a contract child imports its backend factory from. */
const SESSION = resolve(import.meta.dirname, '../../../core/session/src/index.ts')
const SQLITE = resolve(import.meta.dirname, '../../session-store-sqlite/src/index.ts')

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
  async fresh() {
    const { directory, cleanup } = temporary('warmfold-contract-jsonl-')
    return { backend: () => new JsonlFileBackend(directory), sharedStorage: true, child: { module: SESSION, factory: 'JsonlFileBackend', args: [directory], construct: true }, cleanup }
  },
}

const sqlite: BackendHarness = {
  sharedStorage: true,
  multiProcess: true,
  async fresh() {
    const { directory, cleanup } = temporary('warmfold-contract-sqlite-')
    const path = join(directory, 'sessions.db')
    return { backend: () => new SqliteSessionBackend({ path }), sharedStorage: true, child: { module: SQLITE, factory: 'sqliteSessionStore', args: [{ path }] }, cleanup }
  },
}

describeBackendContract('memory', memory)
describeBackendContract('JSONL file', jsonl)
describeBackendContract('SQLite', sqlite)
