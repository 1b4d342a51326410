import pg from 'pg'
import type { Queryable } from './postgres-connections.ts'
import { inTransaction } from './postgres-connections.ts'
import { redactUrl, scrubPassword } from './redact-url.ts'

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = 1

/**
 * Every migration, in order: `MIGRATIONS[n - 1]` takes the schema from version `n - 1` to `n`.
 * Never edit a released one; append a new one and raise `SCHEMA_VERSION`.
 */
const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE warmfold_sessions (
      session_id text PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    // `event` is the exact canonical-JSON line the JSONL store writes (text, not jsonb, which
    // would reorder keys), so a session moves between stores byte for byte.
    `CREATE TABLE warmfold_events (
      session_id text NOT NULL REFERENCES warmfold_sessions (session_id),
      seq bigint NOT NULL CHECK (seq >= 0),
      event text NOT NULL,
      PRIMARY KEY (session_id, seq)
    )`,
    // One row per session that was ever held; `token` only grows (a release expires the row
    // instead of deleting it), so a fencing token is never handed out twice.
    `CREATE TABLE warmfold_leases (
      session_id text PRIMARY KEY REFERENCES warmfold_sessions (session_id),
      holder text NOT NULL,
      token bigint NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
  ],
]

/** Serialises migrations of one database across hosts (an arbitrary constant: "warmfold"). */
export const MIGRATION_LOCK = 0x7761726d666f6c64n

/**
 * Brings the schema to {@link SCHEMA_VERSION} in one transaction under an advisory lock, so two
 * hosts starting at once migrate once; a later run finds the version current and does nothing.
 * A database whose schema is newer than this code is refused (this code might misread it).
 * @returns the version found before migrating (0 for an empty database)
 */
export function migrateWith(client: Queryable, where: string): Promise<number> {
  return inTransaction(client, async () => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()])
    await client.query(
      'CREATE TABLE IF NOT EXISTS warmfold_schema (id int PRIMARY KEY CHECK (id = 1), version int NOT NULL)',
    )
    const version = await storedVersion(client)
    if (version > SCHEMA_VERSION) throw new Error(newerSchemaMessage(where, version))
    for (let next = version + 1; next <= SCHEMA_VERSION; next++) {
      for (const statement of MIGRATIONS[next - 1] as readonly string[]) await client.query(statement)
    }
    await client.query(
      'INSERT INTO warmfold_schema (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = ' +
        'EXCLUDED.version',
      [SCHEMA_VERSION],
    )
    return version
  })
}

/** The version `warmfold_schema` holds (0 when it has no row); the table must exist. */
async function storedVersion(client: Queryable): Promise<number> {
  const found = await client.query<{ version: number }>('SELECT version FROM warmfold_schema WHERE id = 1')
  return found.rows[0]?.version ?? 0
}

/** Why a database whose schema is `version` (newer than this code's) is refused. */
export function newerSchemaMessage(where: string, version: number): string {
  return (
    `the warmfold session schema in ${where} is version ${version}, newer than version ${SCHEMA_VERSION} that this ` +
    `@warmfold/session-store-postgres supports; ` +
    'upgrade the package on this host (a newer host migrated the database), never downgrade the schema by hand'
  )
}

/**
 * The schema version of the database `client` is connected to, read without changing anything:
 * 0 when it has no warmfold tables.
 */
export async function schemaVersion(client: Queryable): Promise<number> {
  // Two queries: a statement naming a missing table fails when parsed, whatever its branches.
  const table = await client.query(`SELECT to_regclass('warmfold_schema') IS NOT NULL AS present`)
  if ((table.rows[0] as { present: boolean }).present !== true) return 0
  return storedVersion(client)
}

/**
 * Migrates the database at `url` to the schema this package uses, for a deploy step that runs
 * before the hosts start (the store also migrates on first use). Safe to run from several
 * hosts at once and to re-run.
 * @returns the schema version found before (0 for an empty database) and the one now in place
 */
export async function migrate(url: string): Promise<{ from: number; to: number }> {
  const client = new pg.Client({ connectionString: url })
  // A connection that breaks mid-migration emits 'error', which would end the process unheard;
  // the query it was running fails with the same cause and is reported below.
  client.on('error', () => {})
  try {
    await client.connect()
    const from = await migrateWith(client, redactUrl(url))
    return { from, to: SCHEMA_VERSION }
  } catch (error) {
    throw new Error(
      `migrating the session schema at ${redactUrl(url)} failed: ${scrubPassword((error as Error).message, url)}`,
      { cause: error },
    )
  } finally {
    await client.end().catch(() => {})
  }
}
