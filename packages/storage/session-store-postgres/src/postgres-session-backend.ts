import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { integerRange, millisecondsRange, numberProblem } from '@warmfold/llm'
import type { OpenOptions, Session, SessionBackend, SessionOptions, TornTailRepair } from '@warmfold/session'
import { Session as SessionClass, SessionError, storedLines } from '@warmfold/session'
import type pg from 'pg'
import { migrateWith, newerSchemaMessage, SCHEMA_VERSION, schemaVersion } from './migrations.ts'
import { readSessionRows } from './read-session-rows.ts'
import { PostgresConnections } from './postgres-connections.ts'
import { redactUrl } from './redact-url.ts'
import { EXPIRES, SessionLease } from './session-lease.ts'

/** Options of {@link postgresSessionStore}. */
export interface PostgresSessionStoreOptions {
  /** Connection URL, e.g. `postgres://user:password@db.internal:5432/app`; the password never appears in an error. */
  url: string
  /**
   * How long a held session stays locked to this store without a renewal, in ms (default
   * 30,000). The store renews every third of it while it holds the session, so this is how
   * long a crashed host keeps a session from other hosts.
   */
  leaseMs?: number
  /** Most connections this store opens at once (default 4). */
  maxConnections?: number
}

interface Held {
  readonly lease: SessionLease
  /** Events `0..flushed-1` are committed. */
  flushed: number
  /** The flush in progress: flushes of one session run one after the other. */
  queue: Promise<void>
  /** Set when a flush failed: nothing after it is acknowledged until the session is reopened. */
  broken?: Error
}

/** The PostgreSQL store for `SessionStore`'s `store` option (see the README). */
export function postgresSessionStore(options: PostgresSessionStoreOptions): PostgresSessionBackend {
  return new PostgresSessionBackend(options)
}

/**
 * Sessions in a PostgreSQL database shared by many hosts: one row per event with a primary
 * key on `(session_id, seq)`, each flush one transaction, and a lease with a fencing token per
 * held session so a second writer is refused with `LOCKED` and a writer that lost its lease can
 * never commit. Migrates the schema on first use.
 */
export class PostgresSessionBackend implements SessionBackend {
  /** The URL without its password, for messages. */
  readonly where: string
  /** Names this store in `LOCKED` errors other writers get: host, pid and a random suffix. */
  readonly holder = `${hostname()} pid ${process.pid} store ${randomUUID().slice(0, 8)}`
  readonly leaseMs: number
  private readonly pool: pg.Pool
  private readonly held = new Map<Session, Held>()
  private readonly connections: PostgresConnections
  private ready?: Promise<void>

  constructor(options: PostgresSessionStoreOptions) {
    if (typeof options.url !== 'string' || options.url === '')
      throw new TypeError(
        `postgresSessionStore: url must be a connection URL, got ` +
          `${typeof options.url === 'string' ? 'an empty string' : typeof options.url}`,
      )
    this.where = redactUrl(options.url)
    this.leaseMs = options.leaseMs ?? 30_000
    const maxConnections = options.maxConnections ?? 4
    const problem =
      numberProblem('leaseMs', this.leaseMs, millisecondsRange(100)) ??
      numberProblem('maxConnections', maxConnections, integerRange(1))
    if (problem) throw new TypeError(`postgresSessionStore: ${problem}`)
    this.connections = new PostgresConnections(options.url, this.where, maxConnections)
    this.pool = this.connections.pool
  }

  async create(id: string, options: SessionOptions): Promise<Session> {
    await this.migrated()
    const token = await this.connections.transaction(`create session ${id}`, async (client) => {
      const inserted = await client.query(
        'INSERT INTO warmfold_sessions (session_id) VALUES ($1) ON CONFLICT DO NOTHING',
        [id],
      )
      if (inserted.rowCount === 0) throw new SessionError('EXISTS', `session ${id} already exists in ${this.where}`)
      const lease = await client.query<{ token: string }>(
        `INSERT INTO warmfold_leases (session_id, holder, token, expires_at) VALUES ($1, $2, 1, ${EXPIRES}) ` +
          'RETURNING token',
        [id, this.holder, this.leaseMs],
      )
      return (lease.rows[0] as { token: string }).token
    })
    const session = new SessionClass(id, options)
    this.hold(session, token, 0)
    return session
  }

  /** A flush commits whole, so rows are never torn: `repairTornTail` and `onRepair` have nothing to do. */
  async open(
    id: string,
    options: OpenOptions & SessionOptions,
    _onRepair?: (repair: TornTailRepair) => void,
  ): Promise<Session> {
    await this.migrated()
    const token = await this.connections.withClient(`take the lease of session ${id}`, (client) =>
      SessionLease.acquire(client, id, this.holder, this.leaseMs, this.where),
    )
    try {
      const rows = await this.connections.query<{ seq: string; event: string }>(
        `read session ${id}`,
        'SELECT seq, event FROM warmfold_events WHERE session_id = $1 ORDER BY seq',
        [id],
      )
      const session = readSessionRows(id, rows.rows, this.where, options)
      this.hold(session, token, session.length)
      return session
    } catch (error) {
      await SessionLease.release(this.pool, id, token).catch(() => {})
      throw error
    }
  }

  /**
   * Reads session `id` as committed now, in one read-only transaction: no lease is taken (a
   * writer at work is not disturbed) and nothing is migrated or created. A database without the
   * schema holds no sessions (`NOT_FOUND`); a newer schema is refused with `IO`.
   */
  async read(id: string): Promise<Session> {
    return this.connections.withClient(`read session ${id}`, async (client) => {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      try {
        const version = await schemaVersion(client)
        if (version > SCHEMA_VERSION) throw new SessionError('IO', newerSchemaMessage(this.where, version))
        const known =
          version === SCHEMA_VERSION &&
          (await client.query('SELECT 1 FROM warmfold_sessions WHERE session_id = $1', [id])).rowCount !== 0
        if (!known) throw new SessionError('NOT_FOUND', `session ${id} does not exist in ${this.where}`)
        const rows = await client.query<{ seq: string; event: string }>(
          'SELECT seq, event FROM warmfold_events WHERE session_id = $1 ORDER BY seq',
          [id],
        )
        const session = readSessionRows(id, rows.rows, this.where, {})
        session.close()
        return session
      } finally {
        await client.query('COMMIT')
      }
    })
  }

  async list(): Promise<string[]> {
    await this.migrated()
    const result = await this.connections.query<{ session_id: string }>(
      'list sessions',
      'SELECT session_id FROM warmfold_sessions ORDER BY session_id COLLATE "C"',
    )
    return result.rows.map((row) => row.session_id)
  }

  flush(session: Session): Promise<void> {
    const held = this.held.get(session)
    if (!held)
      return Promise.reject(
        new SessionError('CLOSED', `session ${session.id} is not held by this store (${this.where})`),
      )
    // What is settled now is what this call acknowledges (a unit being built waits for the next flush).
    const end = session.settledLength
    const run = held.queue.then(() => this.flushNow(session, held, end))
    held.queue = run.catch(() => {})
    return run
  }

  async release(session: Session): Promise<void> {
    const held = this.held.get(session)
    if (!held) return
    try {
      await this.flush(session)
    } finally {
      session.close()
      this.held.delete(session)
      await held.lease.release().catch(() => {})
    }
  }

  /** Releases every held session, then closes the connections. The store is unusable after. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.held.keys()].map((session) => this.release(session)))
    await this.pool.end()
  }

  /** Deletes the session's rows (events, lease, session) in one transaction that first checks our lease. */
  async delete(session: Session): Promise<void> {
    const held = this.held.get(session)
    if (!held) throw new SessionError('CLOSED', `session ${session.id} is not held by the store ${this.where}`)
    session.close()
    this.held.delete(session)
    await held.queue.catch(() => {})
    try {
      await this.connections.transaction(`delete session ${session.id}`, async (client) => {
        await held.lease.check(client)
        for (const table of ['warmfold_events', 'warmfold_leases', 'warmfold_sessions'])
          await client.query(`DELETE FROM ${table} WHERE session_id = $1`, [session.id])
      })
    } finally {
      await held.lease.release().catch(() => {})
    }
  }

  /**
   * Inserts every settled event not yet committed, in one transaction that first checks and
   * renews our lease under a row lock: a store whose lease was taken over fails with `LOCKED`
   * and commits nothing, and nobody can take the lease between that check and the commit.
   */
  private async flushNow(session: Session, held: Held, end: number): Promise<void> {
    if (held.broken) {
      throw new SessionError(
        'CLOSED',
        `session ${session.id}: an earlier flush to ${this.where} failed (${held.broken.message}); nothing after ` +
          `it was acknowledged. Reopen the session to continue.`,
      )
    }
    if (end <= held.flushed) return
    const lines = storedLines(session, held.flushed, end)
    const seqs = lines.map((_, index) => held.flushed + index)
    try {
      await this.connections.transaction(
        `flush session ${session.id} events ${held.flushed}..${end - 1}`,
        async (client) => {
          await held.lease.check(client)
          await client.query(
            'INSERT INTO warmfold_events (session_id, seq, event) SELECT $1, * FROM unnest($2::bigint[], $3::text[])',
            [session.id, seqs, lines],
          )
        },
      )
    } catch (error) {
      // A SessionError: `transaction` turns every driver error into `IO`; the lease check throws `LOCKED`.
      held.broken = error as Error
      throw error
    }
    held.flushed = end
  }

  private hold(session: Session, token: string, flushed: number): void {
    const lease = new SessionLease(this.pool, session.id, this.holder, token, this.leaseMs, this.where)
    lease.startRenewing()
    this.held.set(session, { lease, flushed, queue: Promise.resolve() })
  }

  private migrated(): Promise<void> {
    this.ready ??= this.connections
      .withClient('migrate the schema', async (client) => void (await migrateWith(client, this.where)))
      .catch((error: unknown) => {
        this.ready = undefined // a later call tries again (the server may have been down)
        throw error
      })
    return this.ready
  }
}
