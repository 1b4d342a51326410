import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { missingBuildOutput, packPackages, publishedFiles } from '../pack-packages.ts'
import { workspacePackages } from '../workspace-packages.ts'

let root: string
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'warmfold-pack-test-'))
})
afterEach(() => rm(root, { recursive: true, force: true }))

/** A workspace package whose published manifest points at `dist`, like every warmfold package. */
async function addPackage(folder: string, name: string, extra: Record<string, unknown> = {}): Promise<void> {
  await mkdir(join(root, folder), { recursive: true })
  const manifest = {
    name,
    version: '1.0.0',
    type: 'module',
    exports: { '.': './src/index.ts' },
    publishConfig: { exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } } },
    ...extra,
  }
  await writeFile(join(root, folder, 'package.json'), JSON.stringify(manifest))
}

describe('packing the published packages', () => {
  it('refuses, before packing anything, packages whose built files are missing, naming each package and file', async () => {
    await addPackage('packages/core/one', '@fake/one')
    await addPackage('packages/cli', '@fake/cli', {
      bin: { fake: './dist/main.js' },
      publishConfig: {
        exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
        bin: { fake: './dist/main.js' },
      },
    })
    await addPackage('packages/core/private', '@fake/private', { private: true })
    const destination = join(root, 'tarballs')
    await expect(packPackages(root, destination)).rejects.toThrow(
      '2 of 2 packages are not built, so their tarballs would hold no code: @fake/cli (dist/index.d.ts, dist/index.js, dist/main.js); @fake/one (dist/index.d.ts, dist/index.js). Run pnpm build first (pnpm pack-packages DIR builds unless given --skip-build)',
    )
    // Nothing was written: not even the destination folder.
    expect(await readdir(root)).not.toContain('tarballs')
  })

  it('finds nothing missing once every file the published manifest names is there', async () => {
    await addPackage('packages/core/one', '@fake/one')
    await mkdir(join(root, 'packages/core/one/dist'))
    await writeFile(join(root, 'packages/core/one/dist/index.js'), 'export {}\n')
    expect(missingBuildOutput(root, await workspacePackages(root))).toEqual([
      { name: '@fake/one', missing: ['dist/index.d.ts'] },
    ])
    await writeFile(join(root, 'packages/core/one/dist/index.d.ts'), 'export {}\n')
    expect(missingBuildOutput(root, await workspacePackages(root))).toEqual([])
  })

  it('reads every subpath and bin of the real packages', async () => {
    const packages = await workspacePackages(join(import.meta.dirname, '../..'))
    const llm = packages.find((entry) => entry.name === '@warmfold/llm')!
    expect(publishedFiles(llm.manifest)).toEqual([
      'dist/index.d.ts',
      'dist/index.js',
      'dist/adapter/index.d.ts',
      'dist/adapter/index.js',
      'dist/testing/index.d.ts',
      'dist/testing/index.js',
    ])
    const cli = packages.find((entry) => entry.name === '@warmfold/cli')!
    expect(publishedFiles(cli.manifest)).toEqual(['dist/index.d.ts', 'dist/index.js', 'dist/main.js'])
  })
})
