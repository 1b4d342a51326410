export type { SqliteSessionStoreOptions } from './sqlite-session-backend.ts'
export { SqliteSessionBackend, sqliteSessionStore } from './sqlite-session-backend.ts'
