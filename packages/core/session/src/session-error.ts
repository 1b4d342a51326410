const SESSION_ERROR_BRAND = Symbol.for('warmfold.session.error')

/** Why a session operation failed. */
export type SessionErrorCode =
  /** An append broke a log rule; the log is unchanged. */
  | 'INVALID_APPEND'
  /** A stored line is not a valid event; names the file and line. */
  | 'CORRUPT'
  /** The last stored line was cut short by a crash mid-write. */
  | 'TORN_TAIL'
  /** Another store holds the session's write lock. */
  | 'LOCKED'
  /** No session with that id exists. */
  | 'NOT_FOUND'
  /** A session with that id exists already. */
  | 'EXISTS'
  /** The session id cannot be used as a file name. */
  | 'INVALID_ID'
  /** The store's backend cannot do what was asked (a backend without the optional `delete`). */
  | 'UNSUPPORTED'
  /** The session or its store was closed, or an earlier write failed and it stopped writing. */
  | 'CLOSED'
  /**
   * The storage itself cannot be used. The file store: something other than a regular file is
   * where a session or lock file belongs (a directory, say), or the system refused to create
   * the folder. A database store (`@warmfold/session-store-sqlite`, `-postgres`): the database
   * cannot be opened, reached or queried, or its schema is newer than the store understands.
   * Names the path or the URL (never its password) and the operation; the system or driver
   * error is the `cause`. Nothing was written: retry once the storage is back.
   */
  | 'IO'

/**
 * A session log or store failure. Recognise it with {@link SessionError.isInstance}, never
 * `instanceof` (package copies differ, the brand symbol does not).
 */
export class SessionError extends Error {
  override readonly name = 'SessionError'
  readonly code: SessionErrorCode
  readonly [SESSION_ERROR_BRAND] = true

  constructor(code: SessionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }

  /** Whether `value` is a `SessionError` from any copy of this package. */
  static isInstance(value: unknown): value is SessionError {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SESSION_ERROR_BRAND] === true
    )
  }
}
