import type { TestProject } from 'vitest/node'
import { startPostgres } from './postgres-server.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test database on the server {@link setup} started. */
    postgresUrl: string
  }
}

/**
 * A vitest `globalSetup` for a project whose tests need a real PostgreSQL server: starts one
 * (initdb into a temp directory, a free port on 127.0.0.1), provides its test database's URL as
 * `inject('postgresUrl')` (and `WARMFOLD_TEST_POSTGRES_URL` for child processes), and stops it
 * and removes the directory afterwards, whether the tests passed or not. Missing server binaries
 * fail the run with the install line.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres()
  project.provide('postgresUrl', server.url)
  process.env.WARMFOLD_TEST_POSTGRES_URL = server.url
  return () => server.stop()
}
