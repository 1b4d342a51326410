import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import { configDefaults, defineConfig } from 'vitest/config'
import contractConfig from './packages/storage/session-store-contract/vitest.config.ts'
import postgresConfig from './packages/storage/session-store-postgres/vitest.config.ts'
import { HEAVY_TESTS, testSet } from './vitest.test-sets.ts'

// Which tests run: `fast` (`pnpm test`), `heavy` (`pnpm test:heavy`: real PostgreSQL servers,
// headless Chromium, child processes, the real llama.cpp server) or `all`. See vitest.test-sets.ts.
const set = testSet(process.env.WARMFOLD_TEST_SET)

/**
 * The folders whose tests need a global setup of their own (a real PostgreSQL server, started
 * for them only): one project each, named after its package (`--project @warmfold/session-store-postgres`).
 * Their `vitest.config.ts` is imported here because a config file is bundled, not loaded at run time.
 */
const OWN_PROJECTS: Readonly<Record<string, TestProjectInlineConfiguration>> = {
  'packages/storage/session-store-contract': contractConfig,
  'packages/storage/session-store-postgres': postgresConfig,
}

for (const group of readdirSync(join(import.meta.dirname, 'packages'))) {
  for (const name of readdirSync(join(import.meta.dirname, 'packages', group))) {
    const folder = `packages/${group}/${name}`
    if (existsSync(join(import.meta.dirname, folder, 'vitest.config.ts')) && !OWN_PROJECTS[folder])
      throw new Error(`${folder}/vitest.config.ts is not imported by the root vitest.config.ts: add it to OWN_PROJECTS`)
  }
}

const ownFolders = Object.keys(OWN_PROJECTS)
const inOwnFolder = (path: string) => ownFolders.some((folder) => path.startsWith(`${folder}/`))

// The full real-cache proof takes about 45 s on 2 cores: `pnpm test:real-cache`
// (vitest.real-cache.config.ts) runs it, and CI runs that too; `real-cache.test.ts` keeps a
// one-fold real-cache case in the heavy set.
const REAL_CACHE_PROOF = 'packages/testing/prefix-cache-testkit/test/real-cache-proof.test.ts'

/**
 * Every other test file is in one project, `warmfold`: one module graph, so each source file is
 * transformed once and a worker keeps what it imported for the next file. One project per package
 * took 115 s for the fast set on 2 cores, most of it spent transforming and importing the same
 * packages again for each project; one project takes about 52 s. Run one package's tests with a
 * path filter: `npx vitest run packages/compaction/fold-audit`.
 */
const main: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: 'warmfold',
    include: set === 'heavy' ? HEAVY_TESTS.filter((path) => !inOwnFolder(path)) : ['{packages,scripts}/**/*.test.ts'],
    exclude: [
      ...configDefaults.exclude,
      ...ownFolders.map((folder) => `${folder}/**`),
      REAL_CACHE_PROOF,
      ...(set === 'fast' ? HEAVY_TESTS : []),
    ],
    benchmark: { exclude: [...configDefaults.exclude, ...ownFolders.map((folder) => `${folder}/**`)] },
  },
}

/** One of {@link OWN_PROJECTS}, with the files of the chosen set. */
function ownProject(folder: string): TestProjectInlineConfiguration {
  const config = OWN_PROJECTS[folder] as TestProjectInlineConfiguration
  const { name } = JSON.parse(readFileSync(join(import.meta.dirname, folder, 'package.json'), 'utf8')) as {
    name: string
  }
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

export default defineConfig({
  test: {
    projects: [main, ...ownFolders.map(ownProject)],
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
