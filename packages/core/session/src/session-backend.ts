import type { Session, SessionOptions } from './session.ts'

/** What a backend reports when it repaired a torn tail on open. */
export interface TornTailRepair {
  readonly sessionId: string
  /** The session file that was truncated. */
  readonly file: string
  /** The sidecar the torn bytes were appended to. */
  readonly sidecar: string
  /** 1-based line number of the torn line. */
  readonly line: number
  /** Number of torn bytes moved. */
  readonly bytes: number
  /**
   * Present when the tail was a unit cut short (see `Session.unit`): how many of its events
   * were complete lines and were moved with it. None of them had been acknowledged by a flush.
   */
  readonly droppedEvents?: number
}

/** Options of `SessionStore.open`. */
export interface OpenOptions {
  /**
   * When the tail is torn by a crash mid-write (a last line cut short, or a unit of events
   * written together that the file ends inside), move those bytes to a `.corrupt` sidecar and
   * open the session without them. Off by default: a torn tail is an error.
   */
  repairTornTail?: boolean
}

/**
 * Storage behind `ctx.sessions`. The store ships `memory` and `file` (JSONL); other packages
 * implement this interface (SQL stores) and a host passes an instance as `store`.
 *
 * Contract every backend keeps: the log is append-only with a gap-free `seq`; a resolved
 * `flush` means those events are durable; a torn or concurrent write never corrupts what was
 * acknowledged; a session held by another writer is refused with `SessionError('LOCKED')`.
 */
export interface SessionBackend {
  /** Creates and holds a new empty session. */
  create(id: string, options: SessionOptions): Promise<Session>
  /** Restores and holds an existing session; `onRepair` hears about a repaired torn tail. */
  open(id: string, options: OpenOptions & SessionOptions, onRepair: (repair: TornTailRepair) => void): Promise<Session>
  /** Ids of every stored session, sorted. */
  list(): Promise<string[]>
  /** Makes every event logged so far durable, except those of a unit still being built. */
  flush(session: Session): Promise<void>
  /** Flushes and stops holding the session (releases locks and handles). */
  release(session: Session): Promise<void>
  /**
   * The same as `release`, finished before it returns (used on unload, which cordis does not
   * await). A backend whose storage is only reachable asynchronously (a database server) omits
   * it: on unload the store then starts `release` without waiting, and events not yet flushed
   * are not acknowledged (see `SessionStore.closeAll`, which a host awaits before unloading).
   */
  releaseSync?(session: Session): void
  /**
   * Reads session `id` as it is stored now, without holding it: no lock, lease or writer row is
   * taken, so a writer at work is neither refused nor disturbed, and nothing is repaired or
   * created. Only what a flush acknowledged is read (the file store leaves out a torn tail, which
   * no flush acknowledged; the memory store, which has nothing to flush to, reads every settled
   * event). The session returned is closed: it takes no appends. For readers beside a running
   * host, such as `warmfold report --store`.
   * @throws SessionError `NOT_FOUND`, `CORRUPT`, `IO`.
   */
  read(id: string): Promise<Session>
  /**
   * Deletes a session this backend holds, with every event it logged, and stops holding it: for a
   * session whose making failed halfway (a fork whose replayed history was refused), so nothing
   * half-made is left. Optional: a backend without it cannot delete (see `SessionStore.delete`).
   * @throws SessionError `IO` when the storage refused; `CLOSED` for a session it does not hold.
   */
  delete?(session: Session): Promise<void>
}

/** The methods every backend has; `store` values without them are refused at mount. */
export const SESSION_BACKEND_METHODS = ['create', 'open', 'list', 'flush', 'release', 'read'] as const
