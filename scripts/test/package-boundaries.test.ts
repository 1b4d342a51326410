import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { adapterDependencyViolations, layerViolations, sourceReaches } from '../package-boundaries.ts'
import { workspacePackages } from '../workspace-packages.ts'

const REPOSITORY = join(import.meta.dirname, '../..')

describe('the packages of this repository', () => {
  it("reach no other package's src/ by a relative path (tests and benches that cross packages live in @warmfold/integration)", async () => {
    expect(await sourceReaches(REPOSITORY)).toEqual([])
  })

  it('give the LLM adapters no workspace dependency but @warmfold/llm and @warmfold/test-utils', async () => {
    const adapters = (await workspacePackages(REPOSITORY)).filter((entry) => entry.name.startsWith('@warmfold/llm-'))
    expect(adapters.map((entry) => entry.name)).toEqual([
      '@warmfold/llm-ai-sdk',
      '@warmfold/llm-anthropic',
      '@warmfold/llm-google',
      '@warmfold/llm-openai-compatible',
      '@warmfold/llm-openai-responses',
    ])
    expect(await adapterDependencyViolations(REPOSITORY)).toEqual([])
  })

  it('each sit on a layer, and depend (dev and peer included) only on their own layer and those below', async () => {
    expect(await layerViolations(REPOSITORY)).toEqual([])
  })

  it('keep @warmfold/integration private', async () => {
    const integration = (await workspacePackages(REPOSITORY)).find((entry) => entry.name === '@warmfold/integration')
    expect(integration).toMatchObject({ folder: 'packages/testing/integration', private: true, version: '0.0.0' })
  })
})

describe('the checks find what they forbid', () => {
  let root: string
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'warmfold-boundaries-test-'))
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  async function write(path: string, text: string): Promise<void> {
    await mkdir(join(root, path, '..'), { recursive: true })
    await writeFile(join(root, path), text)
  }

  async function addPackage(folder: string, name: string, manifest: Record<string, unknown> = {}): Promise<void> {
    await write(`${folder}/package.json`, JSON.stringify({ name, version: '1.0.0', ...manifest }))
  }

  it("names each relative path into another package's src/, and lets a package reach its own src/ and another's tests", async () => {
    await addPackage('packages/core/ledger', '@fake/ledger')
    await addPackage('packages/testing/kit', '@fake/kit')
    await addPackage('packages/cli', '@fake/cli')
    await write('packages/testing/kit/src/index.ts', 'export const kit = 1\n')
    await write('packages/core/ledger/src/index.ts', 'export const ledger = 1\n')
    await write(
      'packages/core/ledger/bench/overhead.bench.ts',
      [
        "import { ledger } from '../src/index.ts'",
        "import { kit } from '../../../testing/kit/src/index.ts'",
        "import { helper } from '../../../testing/kit/test/helper.ts'",
        "const child = resolve(import.meta.dirname, '../../../testing/kit/src')",
      ].join('\n'),
    )
    await write('packages/cli/test/run.test.ts', "import { kit } from '../../testing/kit/src/index.ts'\n")
    await write('packages/core/ledger/node_modules/x/index.ts', "import '../../../../testing/kit/src/index.ts'\n")

    expect(await sourceReaches(root)).toEqual([
      { file: 'packages/cli/test/run.test.ts', line: 1, path: '../../testing/kit/src/index.ts', reaches: '@fake/kit' },
      {
        file: 'packages/core/ledger/bench/overhead.bench.ts',
        line: 2,
        path: '../../../testing/kit/src/index.ts',
        reaches: '@fake/kit',
      },
      {
        file: 'packages/core/ledger/bench/overhead.bench.ts',
        line: 4,
        path: '../../../testing/kit/src',
        reaches: '@fake/kit',
      },
    ])
  })

  it('names each workspace dependency of an adapter outside its contract and the test helpers, in every field', async () => {
    await addPackage('packages/llm/llm', '@warmfold/llm')
    await addPackage('packages/llm/llm-fake', '@warmfold/llm-fake', {
      dependencies: { '@warmfold/llm': 'workspace:^', openai: '6.0.0' },
      devDependencies: { '@warmfold/test-utils': 'workspace:*', '@warmfold/agent-loop': 'workspace:*' },
      peerDependencies: { '@warmfold/session': 'workspace:^' },
    })
    await addPackage('packages/core/agent-loop', '@warmfold/agent-loop', {
      devDependencies: { '@warmfold/compaction-basic': 'workspace:*' },
    })

    expect(await adapterDependencyViolations(root)).toEqual([
      '@warmfold/llm-fake: devDependencies @warmfold/agent-loop',
      '@warmfold/llm-fake: peerDependencies @warmfold/session',
    ])
  })

  it('names each dependency that points up the layers, in every field, and each package without a layer', async () => {
    const layers = [['@fake/base'], ['@fake/middle'], ['@fake/top']]
    await addPackage('packages/a/base', '@fake/base', { devDependencies: { '@fake/middle': 'workspace:*' } })
    await addPackage('packages/a/middle', '@fake/middle', {
      dependencies: { '@fake/base': 'workspace:^' },
      peerDependencies: { '@fake/top': 'workspace:^' },
    })
    await addPackage('packages/a/top', '@fake/top', { dependencies: { '@fake/middle': 'workspace:^' } })
    await addPackage('packages/a/stray', '@fake/stray')

    expect(await layerViolations(root, layers)).toEqual([
      '@fake/base: devDependencies @fake/middle (layer 0 → 1)',
      '@fake/middle: peerDependencies @fake/top (layer 1 → 2)',
      '@fake/stray: no layer',
    ])
  })
})
