/**
 * The test files `pnpm test` leaves to `pnpm test:heavy` because they are slow for what they
 * start, not for what they check: real PostgreSQL servers, headless Chromium, child processes
 * racing for locks, `warmfold` and `pnpm demo` run as processes, the real llama.cpp server. CI
 * (`.ci/run`) and `pnpm test:all` run both sets, so nothing is dropped; `pnpm test` stays a
 * fast inner loop (under 150 s on 2 cores). Paths are relative to the repository root.
 */
export const HEAVY_TESTS: readonly string[] = Object.freeze([
  'packages/storage/session-store-contract/test/backends.contract.test.ts',
  'packages/storage/session-store-contract/test/postgres.contract.test.ts',
  'packages/storage/session-store-postgres/test/examples.test.ts',
  'packages/storage/session-store-postgres/test/migrations.test.ts',
  'packages/storage/session-store-postgres/test/postgres-server-loss.test.ts',
  'packages/storage/session-store-postgres/test/postgres-store.test.ts',
  'packages/storage/session-store-postgres/test/postgres-writers.test.ts',
  'packages/storage/session-store-sqlite/test/sqlite-read-only.test.ts',
  'packages/core/session/test/session-lock.test.ts',
  'packages/compaction/compaction-basic/test/background-fold-crash.test.ts',
  'packages/cli/test/cli.test.ts',
  'packages/cli/test/bench-store-postgres.test.ts',
  'packages/cli/test/bench-probe-failures.test.ts',
  'packages/cli/test/report-browser.test.ts',
  'packages/testing/llama-cache-server/test/llama-cache-server.test.ts',
  'packages/testing/prefix-cache-testkit/test/real-cache.test.ts',
  'packages/testing/prefix-cache-testkit/test/real-cache-background.test.ts',
  'packages/testing/prefix-cache-testkit/test/fork-crash.test.ts',
  'packages/testing/prefix-cache-testkit/test/real-cache-fork.test.ts',
  'scripts/test/demo.test.ts',
  'packages/bridges/ai-sdk/test/comparison-table.test.ts',
])

/** Which set a run takes: `fast` (default), `heavy` or `all`. */
export type TestSet = 'fast' | 'heavy' | 'all'

/**
 * The set named by `WARMFOLD_TEST_SET`.
 * @throws Error naming the variable and the value when it is not a set.
 */
export function testSet(value: string | undefined): TestSet {
  if (value === undefined || value === '') return 'fast'
  if (value === 'fast' || value === 'heavy' || value === 'all') return value
  throw new Error(`WARMFOLD_TEST_SET must be fast, heavy or all, got ${JSON.stringify(value)}`)
}
