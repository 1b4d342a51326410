import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { basename, join } from 'node:path'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import { configDefaults, defineConfig } from 'vitest/config'
import contractConfig from './packages/storage/session-store-contract/vitest.config.ts'
import postgresConfig from './packages/storage/session-store-postgres/vitest.config.ts'
import testkitConfig from './packages/testing/prefix-cache-testkit/vitest.config.ts'
import { HEAVY_TESTS, testSet } from './vitest.test-sets.ts'

// Which tests run: `fast` (`pnpm test`), `heavy` (`pnpm test:heavy`: real PostgreSQL servers,
// headless Chromium, child processes, the real llama.cpp server) or `all`. See vitest.test-sets.ts.
const set = testSet(process.env.WARMFOLD_TEST_SET)

/** The package folders, each one project named after its package (`--project @warmfold/llm`). */
function projectFolders(): string[] {
  const groups = ['llm', 'core', 'compaction', 'testing', 'storage', 'bridges'].flatMap((group) =>
    readdirSync(join(import.meta.dirname, 'packages', group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join('packages', group, entry.name)),
  )
  return [...groups, 'packages/cli', 'scripts']
}

/** The folders with a `vitest.config.ts` of their own (imported here: the config file is bundled, not loaded at run time). */
const OWN_CONFIGS: Readonly<Record<string, TestProjectInlineConfiguration>> = {
  'packages/storage/session-store-contract': contractConfig,
  'packages/storage/session-store-postgres': postgresConfig,
  'packages/testing/prefix-cache-testkit': testkitConfig,
}

/**
 * One inline project per folder: its own `vitest.config.ts` (global setups, timeouts, excludes),
 * with the files of the chosen set. Inline, because a project defined by a folder glob inherits
 * nothing from this file, so no exclude here could reach it.
 */
function project(folder: string): TestProjectInlineConfiguration {
  const manifest = join(import.meta.dirname, folder, 'package.json')
  const name = existsSync(manifest)
    ? (JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name
    : basename(folder)
  if (existsSync(join(import.meta.dirname, folder, 'vitest.config.ts')) && !OWN_CONFIGS[folder]) {
    throw new Error(`${folder}/vitest.config.ts is not imported by the root vitest.config.ts: add it to OWN_CONFIGS`)
  }
  const config = OWN_CONFIGS[folder] ?? {}
  const heavy = HEAVY_TESTS.filter((path) => path.startsWith(`${folder}/`)).map((path) => path.slice(folder.length + 1))
  const exclude = [...configDefaults.exclude, ...(config.test?.exclude ?? [])]
  return {
    ...config,
    extends: true,
    test: {
      ...config.test,
      name,
      root: folder,
      include: set === 'heavy' ? heavy : ['**/*.test.ts'],
      exclude: set === 'fast' ? [...exclude, ...heavy] : exclude,
    },
  }
}

const projects = projectFolders()
  .map(project)
  .filter((config) => (config.test?.include?.length ?? 0) > 0)

export default defineConfig({
  test: {
    projects,
    // vitest runs cores − 1 files at once, so one at a time on 2 cores; most files spend their
    // time importing modules or waiting on child processes and local servers, so two at a time
    // take about a third less wall time there (measured in the README's "Working on warmfold").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Test files share a worker's module cache instead of importing every package again: module
    // loading was about half of the suite's time (collect 148 s of a 219 s fast run, 63 s of
    // 102 s without isolation). Every test builds its own cordis Context, store and servers, so
    // no test depends on a fresh module instance.
    isolate: false,
    // 5 s (vitest's default) is what a full real-fold run or a 100-case property test takes on a
    // 2-core machine that is also running other work: a CI run beside other jobs failed four such
    // tests at 5.0 s that pass in 1–3 s alone. A test that hangs still fails, after 30 s.
    testTimeout: 30_000,
  },
})
