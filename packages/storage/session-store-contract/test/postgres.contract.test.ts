import { randomUUID } from 'node:crypto'
import type { PostgresSessionBackend } from '@warmfold/session-store-postgres'
import { postgresSessionStore } from '@warmfold/session-store-postgres'
import pg from 'pg'
import { inject } from 'vitest'
import type { BackendHarness } from '../src/index.ts'
import { describeBackendContract } from '../src/index.ts'
import { tornSqlWrite } from './torn-write.ts'

/** The package a contract child (src/contract-child.ts, in this package) imports the store from. */
const POSTGRES = '@warmfold/session-store-postgres'
/** The lease of the stores under test: a killed writer's sessions are free again this long after its last renewal. */
const LEASE_MS = 1_000

/** Runs `text` on a new connection to `url`. */
async function query(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/**
 * Each case gets a database of its own on the server the global setup started, so the
 * contract's fixed session ids never meet; every store the case made (its connection pool) is
 * closed and the database dropped afterwards.
 */
const postgres: BackendHarness = {
  sharedStorage: true,
  multiProcess: true,
  midFlushProbe: true,
  tornWrites: true,
  async fresh() {
    const server = inject('postgresUrl')
    const name = `contract_${randomUUID().replaceAll('-', '').slice(0, 12)}`
    await query(server, `CREATE DATABASE ${name}`)
    const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString()
    const stores: PostgresSessionBackend[] = []
    let probe: pg.Client | undefined
    return {
      backend() {
        const store = postgresSessionStore({ url, leaseMs: LEASE_MS })
        stores.push(store)
        return store
      },
      sharedStorage: true,
      child: { module: POSTGRES, factory: 'postgresSessionStore', args: [{ url, leaseMs: LEASE_MS }] },
      takeoverMs: LEASE_MS,
      tornWrite: (id, from, lines) => tornSqlWrite('postgres', url, id, from, lines),
      async writeInProgress() {
        if (!probe) {
          probe = new pg.Client({ connectionString: url })
          await probe.connect()
        }
        // An events INSERT running, or run and not yet committed, in another session's open transaction.
        const found = await probe.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
             AND xact_start IS NOT NULL AND state IN ('active', 'idle in transaction') AND query LIKE 'INSERT INTO warmfold_events%'`,
        )
        return found.rowCount !== 0
      },
      async cleanup() {
        await probe?.end()
        await Promise.all(stores.map((store) => store.close()))
        await query(server, `DROP DATABASE ${name} WITH (FORCE)`)
      },
    }
  },
}

describeBackendContract('PostgreSQL', postgres)
