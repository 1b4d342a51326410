import type { SessionBackend } from '@warmfold/session'
import type { sqliteSessionStore } from '@warmfold/session-store-sqlite'
import { loadOptionalPackage } from './load-optional-package.ts'
import { UsageError } from './usage-error.ts'

/** Where `--store` keeps the sessions: a JSONL folder, an SQLite file or a PostgreSQL database. */
export type StoreSpec =
  | { readonly kind: 'file'; readonly directory: string }
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string }

/** The `--store` syntax, for help and errors. */
export const STORE_SYNTAX = 'file:DIR | sqlite:PATH | postgres:URL'

/**
 * Parses `--store file:DIR`, `sqlite:PATH` or `postgres:URL` (`postgres://…` and `postgresql://…`
 * are taken as they are).
 * @throws UsageError naming the flag and the syntax; a URL's password is never quoted.
 */
export function parseStoreSpec(flag: string, text: string): StoreSpec {
  if (/^postgres(ql)?:\/\//.test(text)) return { kind: 'postgres', url: text }
  const colon = text.indexOf(':')
  const kind = colon > 0 ? text.slice(0, colon) : ''
  const rest = colon > 0 ? text.slice(colon + 1) : ''
  if (kind === 'file' && rest) return { kind: 'file', directory: rest }
  if (kind === 'sqlite' && rest) return { kind: 'sqlite', path: rest }
  if (kind === 'postgres' && /^postgres(ql)?:\/\//.test(rest)) return { kind: 'postgres', url: rest }
  throw new UsageError(`${flag} must be ${STORE_SYNTAX}, got ${JSON.stringify(redactUrl(text))}`)
}

/** `spec` for a person: a PostgreSQL URL without its password. */
export function describeStore(spec: StoreSpec): string {
  const where = spec.kind === 'file' ? spec.directory : spec.kind === 'sqlite' ? spec.path : redactUrl(spec.url)
  return `${spec.kind}:${where}`
}

/** A URL with any password replaced by `***`. */
export function redactUrl(text: string): string {
  return text.replace(/(\/\/[^:/@\s]+:)[^@/\s]*@/, '$1***@')
}

/** What `--store sqlite` uses of `@warmfold/session-store-sqlite`. */
interface SqliteModule {
  readonly sqliteSessionStore: typeof sqliteSessionStore
}

/** What `--store postgres` uses of `@warmfold/session-store-postgres`. */
interface PostgresModule {
  readonly postgresSessionStore: (options: { url: string }) => SessionBackend
}

/**
 * A factory of fresh backends for an SQL `spec` (one per run, so a run's session is released with
 * its context), importing the store package now: both are optional peers of the CLI.
 * @throws RunError naming the package to install when it is missing.
 */
export async function backendFactory(spec: Exclude<StoreSpec, { kind: 'file' }>): Promise<() => SessionBackend> {
  if (spec.kind === 'sqlite') {
    const module = await loadOptionalPackage<SqliteModule>(
      '@warmfold/session-store-sqlite',
      '--store sqlite',
      'the embedded SQLite session store',
    )
    return () => module.sqliteSessionStore({ path: spec.path })
  }
  const module = await loadOptionalPackage<PostgresModule>(
    '@warmfold/session-store-postgres',
    '--store postgres',
    'the PostgreSQL session store',
  )
  return () => module.postgresSessionStore({ url: spec.url })
}

/**
 * Refuses a store that already holds one of `ids`, before anything runs (a bench run would fail
 * on it only after the earlier runs; the demo would append to an old session), and a store that
 * cannot be reached.
 * @throws UsageError naming the store (without a password) and the ids, or why it cannot list them.
 */
export async function refuseHeldIds(
  spec: Exclude<StoreSpec, { kind: 'file' }>,
  backend: SessionBackend,
  ids: readonly string[],
): Promise<void> {
  let existing: string[]
  try {
    existing = await backend.list()
  } catch (error) {
    throw new UsageError(
      `--store ${describeStore(spec)}: cannot list its sessions: ${redactUrl((error as Error).message)}`,
    )
  }
  const taken = ids.filter((id) => existing.includes(id))
  if (taken.length)
    throw new UsageError(
      `--store ${describeStore(spec)} already holds session(s) ${taken.join(', ')}; use another store or remove them`,
    )
}
