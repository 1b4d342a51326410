import { SessionError } from '@warmfold/session'
import pg from 'pg'
import { scrubPassword } from './redact-url.ts'

/** Something to run a query on: a client (inside a transaction or not) or the pool. */
export interface Queryable {
  query<Row extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>>
}

/** Runs `work` between `BEGIN` and `COMMIT` on `client`; a failure rolls back and is thrown. */
export async function inTransaction<T>(client: Queryable, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN')
  try {
    const result = await work()
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}

/**
 * The connection pool of a PostgreSQL session store: every client's connection errors heard,
 * a broken client dropped instead of reused, and every database error turned into
 * `SessionError('IO')` naming the URL without its password.
 */
export class PostgresConnections {
  readonly pool: pg.Pool
  /** The first connection error of each pooled client, so it is dropped instead of reused. */
  private readonly connectionErrors = new WeakMap<pg.PoolClient, Error>()

  /** `where` is the URL without its password, for messages. */
  constructor(
    private readonly url: string,
    private readonly where: string,
    maxConnections: number,
  ) {
    // allowExitOnIdle: idle connections must not keep a host process alive (a CLI run that is done
    // would otherwise wait for their 10 s idle timeout), as a held session's lease timer does not.
    this.pool = new pg.Pool({ connectionString: url, max: maxConnections, allowExitOnIdle: true })
    // No connection error may ever go unheard: node-postgres emits 'error' on a client whose
    // connection breaks, and an 'error' event without a listener ends the host process. The pool
    // listens only while a client is idle (and re-emits it as the pool's 'error'); a checked-out
    // client (a flush whose server was stopped, or whose backend was terminated) emits it with
    // nobody listening. So every client gets a listener of ours for its whole life, and the pool's
    // 'error' is heard too. Neither needs to throw: the operation the broken connection was
    // running fails with the driver's error (and a broken client refuses every later query),
    // which `withClient` turns into `SessionError('IO')`; an idle connection that dropped was
    // already removed by the pool, so the next operation connects again or fails with `IO`.
    this.pool.on('connect', (client) => {
      client.on('error', (error) => {
        if (!this.connectionErrors.has(client)) this.connectionErrors.set(client, error)
      })
    })
    this.pool.on('error', () => {})
  }

  query<Row extends pg.QueryResultRow>(what: string, text: string, values?: unknown[]): Promise<pg.QueryResult<Row>> {
    return this.withClient(what, (client) => client.query<Row>(text, values))
  }

  transaction<T>(what: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.withClient(what, (client) => inTransaction(client, () => work(client)))
  }

  /**
   * Runs `work` on a pooled connection; database errors become `IO` naming the URL without its
   * password.
   */
  async withClient<T>(what: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (error) {
      throw this.ioError(what, error)
    }
    let failed: unknown
    try {
      return await work(client)
    } catch (error) {
      failed = error
      if (SessionError.isInstance(error)) throw error
      throw this.ioError(what, error)
    } finally {
      // A connection that broke, or whose query failed mid-protocol, is dropped, not reused.
      client.release(
        this.connectionErrors.get(client) ??
          (failed !== undefined && !SessionError.isInstance(failed) ? (failed as Error) : undefined),
      )
    }
  }

  private ioError(what: string, error: unknown): SessionError {
    const message = scrubPassword(error instanceof Error ? error.message : String(error), this.url)
    return new SessionError('IO', `${what} at ${this.where} failed: ${message}`, { cause: error })
  }
}
