/**
 * Packs every published package of the workspace into one folder, as `pnpm publish` would
 * publish it (`workspace:` ranges replaced, `publishConfig` applied, the README prepared by
 * `prepack`). Private packages (`"private": true`, e.g. `@warmfold/test-utils`) are filtered
 * out by their manifest, so a new private package is never packed either. Run `pnpm build`
 * first: the tarballs hold `dist`.
 *
 *   tsx scripts/pack-packages.ts <destination folder>
 */
import { execFile } from 'node:child_process'
import { mkdir, readdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import type { WorkspacePackage } from './workspace-packages.ts'
import { workspacePackages } from './workspace-packages.ts'

const run = promisify(execFile)

/** One packed package. */
export interface PackedPackage extends WorkspacePackage {
  /** Absolute path of its tarball. */
  readonly tarball: string
}

/** The tarball name pnpm gives `@scope/name@version`. */
function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`
}

/**
 * Packs the published packages of the workspace at `root` into `destination` with one
 * `pnpm -r --filter … pack` and returns them with their tarballs.
 * @throws Error when pnpm fails, or a tarball it should have written is missing.
 */
export async function packPackages(root: string, destination: string): Promise<PackedPackage[]> {
  const published = (await workspacePackages(root)).filter((entry) => !entry.private)
  await mkdir(destination, { recursive: true })
  const filters = published.flatMap((entry) => ['--filter', entry.name])
  await run('npx', ['-y', 'pnpm@12.4.2', '-r', ...filters, 'pack', '--pack-destination', destination], { cwd: root, maxBuffer: 64 * 1024 * 1024 }).catch((error: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(`pnpm pack failed in ${root}:\n${error.stdout ?? ''}${error.stderr ?? error.message}`, { cause: error })
  })
  const written = new Set(await readdir(destination))
  return published.map((entry) => {
    const file = tarballName(entry.name, entry.version)
    if (!written.has(file)) throw new Error(`pnpm pack wrote no ${file} for ${entry.name} in ${destination} (it holds: ${[...written].join(', ')})`)
    return { ...entry, tarball: join(destination, file) }
  })
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const destination = process.argv[2]
  if (!destination) {
    console.error('usage: tsx scripts/pack-packages.ts <destination folder>')
    process.exitCode = 2
  } else {
    for (const entry of await packPackages(resolve(import.meta.dirname, '..'), resolve(destination))) console.log(`${entry.name}: ${entry.tarball}`)
  }
}
