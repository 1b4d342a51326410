// The package's API: the store, its options, and the migration entry point. The lease, row
// reader and URL helpers are internals (their types would expose `pg`'s to a host's compiler).
export { migrate, SCHEMA_VERSION } from './migrations.ts'
export type { PostgresSessionStoreOptions } from './postgres-session-backend.ts'
export { PostgresSessionBackend, postgresSessionStore } from './postgres-session-backend.ts'
