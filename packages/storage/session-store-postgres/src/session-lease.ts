import { SessionError } from '@warmfold/session'
import type pg from 'pg'
import type { Queryable } from './postgres-connections.ts'

/** `expires_at` from now, in the database's clock, so hosts with skewed clocks agree. */
export const EXPIRES = `clock_timestamp() + $3::float8 * interval '1 millisecond'`

/**
 * The lease a store holds on one session: a row in `warmfold_leases` with the holder's name,
 * a fencing token and an expiry in the database's clock. Taking a free or expired lease
 * increments the token; every flush checks, in its own transaction and under the row lock,
 * that the row still carries this token, so a store that lost its lease (it paused longer
 * than `leaseMs`, and another host took over) can never commit again.
 */
export class SessionLease {
  private timer?: NodeJS.Timeout
  /** The timer's renewal still on the wire, if any: `release()` waits for it. */
  private renewing?: Promise<unknown>

  constructor(
    private readonly pool: pg.Pool,
    readonly sessionId: string,
    readonly holder: string,
    readonly token: string,
    private readonly leaseMs: number,
    private readonly where: string,
  ) {}

  /**
   * Takes the lease of an existing session: `NOT_FOUND` when there is no such session,
   * `LOCKED` naming the holder while another store's lease has not expired.
   * @returns the new fencing token
   */
  static async acquire(on: Queryable, id: string, holder: string, leaseMs: number, where: string): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      // The upsert takes the row lock, so of two racing stores exactly one moves the token on;
      // the other re-reads the row after the first commits and finds it unexpired.
      const taken = await on.query<{ token: string }>(
        `INSERT INTO warmfold_leases (session_id, holder, token, expires_at)
         SELECT session_id, $2::text, 1, ${EXPIRES} FROM warmfold_sessions WHERE session_id = $1
         ON CONFLICT (session_id) DO UPDATE
           SET holder = EXCLUDED.holder, token = warmfold_leases.token + 1, expires_at = EXCLUDED.expires_at
         WHERE warmfold_leases.expires_at <= clock_timestamp()
         RETURNING token`,
        [id, holder, leaseMs],
      )
      if (taken.rows[0]) return taken.rows[0].token
      const row = await SessionLease.current(on, id)
      if (!row) throw new SessionError('NOT_FOUND', `session ${id} does not exist in ${where}`)
      // Released or expired since the upsert looked (a holder closing right then): take it now.
      if (row.leftMs === 0 && attempt < 3) continue
      throw new SessionError(
        'LOCKED',
        `session ${id} in ${where} is held by ${row.holder} (lease token ${row.token}, expires in ${row.leftMs} ` +
          `ms unless renewed); close it there, or wait for the lease to expire if that host crashed`,
      )
    }
  }

  /**
   * Who holds session `id`'s lease and for how many more ms (0 once it expired or was released,
   * whose `expires_at` is `-infinity`); `undefined` when the session has no lease row.
   */
  static async current(
    on: Queryable,
    id: string,
  ): Promise<{ holder: string; token: string; leftMs: number } | undefined> {
    const found = await on.query<{ holder: string; token: string; left_ms: number }>(
      `SELECT holder, token,
         CASE WHEN expires_at <= clock_timestamp() THEN 0
           ELSE ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000) END::float8 AS left_ms
       FROM warmfold_leases WHERE session_id = $1`,
      [id],
    )
    const row = found.rows[0]
    return row && { holder: row.holder, token: row.token, leftMs: row.left_ms }
  }

  /**
   * Marks the lease released (`expires_at = -infinity`, keeping its token, which only ever grows)
   * if we still hold it. A released lease is never renewed again (see `renew`).
   */
  static async release(pool: pg.Pool, id: string, token: string): Promise<void> {
    await pool.query(`UPDATE warmfold_leases SET expires_at = '-infinity' WHERE session_id = $1 AND token = $2`, [
      id,
      token,
    ])
  }

  /**
   * Inside a flush transaction: renews the lease if it still carries our token, else throws
   * `LOCKED`. The row stays locked until the transaction ends, so no one takes over before
   * our commit. An expired lease nobody took is still ours: no other writer can have
   * committed under it.
   */
  async check(client: Queryable): Promise<void> {
    if (await this.renew(client)) return
    const now = await SessionLease.current(client, this.sessionId)
    throw new SessionError(
      'LOCKED',
      `session ${this.sessionId} in ${this.where}: this store's lease (token ${this.token}) was taken over by ` +
        `${now?.holder ?? 'nobody'} (token ${now?.token ?? '?'}) after it expired; ` +
        'nothing was committed. Reopen the session once that writer is done.',
    )
  }

  /** Renews every third of `leaseMs` while the session is held; a failed renewal is retried at the next tick. */
  startRenewing(): void {
    const every = Math.max(50, Math.floor(this.leaseMs / 3))
    this.timer = setInterval(() => {
      if (this.renewing) return // the last tick's renewal is still on the wire
      this.renewing = this.renew(this.pool)
        // Taken over or released: the next flush fails with `LOCKED` (see `check`).
        .then((renewed) => renewed || this.stopRenewing())
        .catch(() => {}) // the next tick or flush tries again and reports a lasting failure
        .finally(() => (this.renewing = undefined))
    }, every)
    // A held session must not keep a host process alive on its own.
    this.timer.unref()
  }

  /**
   * Moves the expiry on if the row still carries our token and was not released; false when the
   * lease was taken over or released. A renewal the timer sent just before `release()` may reach
   * the database after the release: without the `-infinity` guard it would hold the session for
   * another `leaseMs` that nobody renews, and a reopen in that window gets `LOCKED`.
   */
  async renew(on: Queryable = this.pool): Promise<boolean> {
    const result = await on.query(
      `UPDATE warmfold_leases SET expires_at = ${EXPIRES} WHERE session_id = $1 AND token = $2 AND expires_at <> ` +
        `'-infinity'`,
      [this.sessionId, this.token, this.leaseMs],
    )
    return result.rowCount === 1
  }

  stopRenewing(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }

  /** Stops renewing, waits for a renewal already sent, then releases the lease. */
  async release(): Promise<void> {
    this.stopRenewing()
    await this.renewing
    await SessionLease.release(this.pool, this.sessionId, this.token)
  }
}
