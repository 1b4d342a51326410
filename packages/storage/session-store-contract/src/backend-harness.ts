import type { SessionBackend } from '@warmfold/session'

/**
 * How a child process builds a backend on the same storage: it imports `module` (an absolute
 * path or package name, run with `node --import tsx`) and calls its export `factory(...args)`
 * (with `new` when `construct`).
 */
export interface ChildBackendSpec {
  readonly module: string
  readonly factory: string
  readonly args: readonly unknown[]
  /** Call the export with `new` (a backend class rather than a factory function). */
  readonly construct?: boolean
}

/** One fresh, empty storage location (a folder, a database file, a schema) under test. */
export interface StoreUnderTest {
  /**
   * A backend on this storage. Every call returns a new store instance, unless the backend has
   * no storage of its own beyond the instance (memory): then the same instance each time.
   */
  backend(): SessionBackend
  /** Whether two `backend()` calls are two stores on one storage (a second one is refused with `LOCKED`). */
  readonly sharedStorage: boolean
  /** For the multi-process cases: how a child process opens a backend here. Absent: those cases are not registered. */
  readonly child?: ChildBackendSpec
  /**
   * The longest a writer killed with kill -9 keeps its sessions from other writers, in ms: 0 or
   * absent when the store sees the dead process at once (a lock file or writer row with a pid),
   * the lease for a store whose crashed holder's lease must expire first. The contract retries a
   * `LOCKED` open for that long (plus a margin for a busy machine) after a kill.
   */
  readonly takeoverMs?: number
  /**
   * Whether another connection is inside an uncommitted write transaction on this storage (SQLite:
   * it holds the write lock; PostgreSQL: its `INSERT` of events runs or ran in a transaction not
   * yet committed). The kill -9 case uses it to stop the writer inside its flush transaction and
   * prove that the kill landed there. Absent for a store whose flush is one `write` call (JSONL):
   * that case then checks only that the killed flush is all or none.
   */
  writeInProgress?(): Promise<boolean>
  /**
   * Leaves the storage as a writer that crashed while flushing `lines` (the canonical-JSON lines
   * of session `id`'s events from seq `from` on, as a store writes them) would: the file store
   * with that append cut short inside its last line, an SQL store with a process that wrote
   * those rows in a transaction and was killed before it committed. Nothing of a store is used.
   * Resolves with what a reopen may keep of `lines`: `'complete lines'` for a file (the lines
   * before the cut), `'none'` for a store whose flush is a transaction.
   */
  tornWrite?(id: string, from: number, lines: readonly string[]): Promise<'complete lines' | 'none'>
  /** Releases what `backend()` opened and removes the storage. */
  cleanup(): Promise<void>
}

/** Creates a fresh {@link StoreUnderTest} per test case. */
export interface BackendHarness {
  /** Whether its stores' `backend()` calls are separate stores on one storage. */
  readonly sharedStorage: boolean
  /** Whether its stores have a `child` spec (another process can open the same storage). */
  readonly multiProcess: boolean
  /** Whether its stores have `writeInProgress`, so the kill -9 case can prove the kill landed inside a transaction. */
  readonly midFlushProbe?: boolean
  /** Whether its stores have `tornWrite` (the memory store has no storage a crash could tear). */
  readonly tornWrites?: boolean
  /** Whether its backends implement the optional `delete`; default true (the delete case then requires it). */
  readonly deletes?: boolean
  fresh(): Promise<StoreUnderTest>
}
