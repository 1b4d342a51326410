/**
 * The test files `pnpm test` leaves to `pnpm test:heavy`: those slow for what they start (real
 * PostgreSQL servers, headless Chromium, child processes racing for locks, `warmfold` and
 * `pnpm demo` run as processes, the real llama.cpp server), and those that took 2 s or more in a
 * fast-set run on a quiet 2-core machine for what they run (workload simulations, long property
 * runs, streams that must stall past a timeout; the groups below, by that measurement). CI
 * (`.ci/run`) and `pnpm test:all` run both sets, so nothing is dropped; `pnpm test` stays a
 * fast inner loop (about 50 s on 2 cores). Paths are relative to the repository root.
 */
export const HEAVY_TESTS: readonly string[] = Object.freeze([
  'packages/storage/session-store-contract/test/backends.contract.test.ts',
  'packages/storage/session-store-contract/test/postgres.contract.test.ts',
  'packages/storage/session-store-postgres/test/examples.test.ts',
  'packages/storage/session-store-postgres/test/migrations.test.ts',
  'packages/storage/session-store-postgres/test/postgres-server-loss.test.ts',
  'packages/storage/session-store-postgres/test/postgres-store.test.ts',
  'packages/storage/session-store-postgres/test/postgres-writers.test.ts',
  // Connects to nothing, but every file of this project starts the project's PostgreSQL server.
  'packages/storage/session-store-postgres/test/postgres-options.test.ts',
  'packages/storage/session-store-sqlite/test/sqlite-read-only.test.ts',
  'packages/core/session/test/session-lock.test.ts',
  'packages/compaction/compaction-basic/test/background-fold-crash.test.ts',
  'packages/cli/test/cli.test.ts',
  'packages/cli/test/bench-store-postgres.test.ts',
  'packages/cli/test/proxy-store-postgres.test.ts',
  'packages/cli/test/bench-probe-failures.test.ts',
  'packages/cli/test/report-browser.test.ts',
  'packages/testing/llama-cache-server/test/llama-cache-server.test.ts',
  'packages/testing/prefix-cache-testkit/test/real-cache.test.ts',
  'packages/testing/prefix-cache-testkit/test/real-cache-background.test.ts',
  'packages/testing/prefix-cache-testkit/test/fork-crash.test.ts',
  'packages/testing/prefix-cache-testkit/test/real-cache-fork.test.ts',
  'scripts/test/demo.test.ts',
  'packages/bridges/ai-sdk/test/comparison-table.test.ts',
  // Slow for what they run (seconds each in a fast-set run of 2026-12-02): 8.9, 7.5, 6.8, 5.4, 4.5, 4.3, 4.3, 3.9, 3.9 s.
  'packages/testing/prefix-cache-testkit/test/regression-specs.test.ts',
  'packages/testing/prefix-cache-testkit/test/price-run.test.ts',
  'packages/testing/prefix-cache-testkit/test/cache-ledger-workload.test.ts',
  'packages/core/token-meter/test/token-meter-property.test.ts',
  'packages/cli/test/report.test.ts',
  'packages/testing/prefix-cache-testkit/test/cache-probe-failures.test.ts',
  'packages/bridges/ai-sdk/test/tool-session.test.ts',
  'packages/llm/llm-anthropic/test/stalls.test.ts',
  'packages/llm/llm-openai-compatible/test/stalls.test.ts',
  // Child processes (`warmfold --version`; `warmfold` writing to a FIFO, or given one or /dev/zero to read; the README
  // preparation script run as a process; a host that must exit by itself after ctx.stop() during a background fold, and
  // one whose log starts refusing appends mid-turn).
  'packages/cli/test/cli-version.test.ts',
  'packages/cli/test/output-file.test.ts',
  'packages/cli/test/flag-files-process.test.ts',
  'scripts/test/prepare-package-readme.test.ts',
  'packages/testing/integration/test/background-folds/unload-exit.test.ts',
  'packages/core/agent-loop/test/log-failures-exit.test.ts',
  // Slow for what they run, 2.1–3.2 s each in that run: property runs, whole workloads, a stream that must stall past a timeout.
  'packages/testing/prefix-cache-testkit/test/prefix-cache-expiry-property.test.ts',
  'packages/testing/prefix-cache-testkit/test/examples.test.ts',
  'packages/cli/test/bench-keep-sessions.test.ts',
  'packages/llm/llm-ai-sdk/test/stalls.test.ts',
  'packages/testing/prefix-cache-testkit/test/prune-pays.test.ts',
  'packages/testing/prefix-cache-testkit/test/prefix-cache-property.test.ts',
  // Waits out a server's retry-after for real (1.2 s), and probes three dialects through `warmfold bench` (2.3–2.7 s).
  'packages/llm/llm-openai-compatible/test/retry-after-waits.test.ts',
  'packages/cli/test/bench-probe-dialects.test.ts',
  // Loads the optional real-cache package (node-llama-cpp's native bindings), about 2 s.
  'packages/cli/test/load-llama-cache-server.test.ts',
  // Six `warmfold bench` runs as processes (about 11 s), and a 12-run property over background swaps (about 4 s).
  'scripts/test/small-window-bench.test.ts',
  'packages/compaction/compaction-basic/test/background-fold-stale-property.test.ts',
  // 10,000 requests through the proxy's observer (memory stays flat), about 3 s; and its live page in headless Chromium.
  'packages/bridges/proxy/test/observe-memory.test.ts',
  'packages/bridges/proxy/test/observe-page-browser.test.ts',
  // The whole proxy on a body nested 500,000 levels deep (two stack overflows, caught), about 2.5 s.
  'packages/bridges/proxy/test/proxy-hostile.test.ts',
  // Real agent CLIs installed from npm (once, into ~/.cache/warmfold-agents) and run as processes against a
  // scripted upstream, 15–60 s each.
  'packages/bridges/proxy/test/agents-qwen-code.test.ts',
  'packages/bridges/proxy/test/agents-qwen-code-cold.test.ts',
  'packages/bridges/proxy/test/agents-codex.test.ts',
  'packages/bridges/proxy/test/agents-gemini-cli.test.ts',
  'packages/bridges/proxy/test/agents-claude-code.test.ts',
  'packages/bridges/proxy/test/agents-pi.test.ts',
  'packages/bridges/proxy/test/agents-opencode.test.ts',
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
