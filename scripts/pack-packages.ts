/**
 * Packs every published package of the workspace into one folder, as `pnpm publish` would
 * publish it (`workspace:` ranges replaced, `publishConfig` applied, the README prepared by
 * `prepack`). Private packages (`"private": true`, e.g. `@warmfold/test-utils`) are filtered
 * out by their manifest, so a new private package is never packed either. The tarballs hold
 * `dist`: the command builds first (every package with a `build` script, as `pnpm build` does, saying
 * which package it builds and how long each took; see build-packages.ts), and packing refuses a package whose manifest
 * names a file that is not there, so a tarball without code is never written.
 *
 *   tsx scripts/pack-packages.ts [--skip-build] <destination folder>
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { buildPackages, formatDuration } from './build-packages.ts'
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

/** Every file `manifest` points a user at once published: the targets of `publishConfig.exports` and `bin` (`./dist/index.js`, …). */
export function publishedFiles(manifest: Record<string, unknown>): string[] {
  const publish = (manifest.publishConfig ?? {}) as Record<string, unknown>
  const files: string[] = []
  const collect = (value: unknown): void => {
    if (typeof value === 'string') files.push(value.replace(/^\.\//, ''))
    else if (value && typeof value === 'object') for (const item of Object.values(value)) collect(item)
  }
  collect(publish.exports ?? manifest.exports)
  collect(publish.bin ?? manifest.bin)
  return [...new Set(files)]
}

/** For each of `packages` (folders under `root`) the files its published manifest names that do not exist: a package not built yet. */
export function missingBuildOutput(
  root: string,
  packages: readonly WorkspacePackage[],
): Array<{ name: string; missing: string[] }> {
  return packages.flatMap((entry) => {
    const missing = publishedFiles(entry.manifest).filter((file) => !existsSync(join(root, entry.folder, file)))
    return missing.length ? [{ name: entry.name, missing }] : []
  })
}

/**
 * Packs the published packages of the workspace at `root` into `destination` with one
 * `pnpm -r --filter … pack` and returns them with their tarballs.
 * @throws Error before packing when a package's manifest names a file that was not built (the
 *   tarball would hold no code), when pnpm fails, or when a tarball it should have written is missing.
 */
export async function packPackages(
  root: string,
  destination: string,
  log: (line: string) => void = () => {},
): Promise<PackedPackage[]> {
  const published = (await workspacePackages(root)).filter((entry) => !entry.private)
  const unbuilt = missingBuildOutput(root, published)
  if (unbuilt.length) {
    const list = unbuilt.map((entry) => `${entry.name} (${entry.missing.join(', ')})`).join('; ')
    throw new Error(
      `${unbuilt.length} of ${published.length} packages are not built, so their tarballs would hold no code: ${list}. Run pnpm build first (pnpm pack-packages DIR builds unless given --skip-build)`,
    )
  }
  await mkdir(destination, { recursive: true })
  const started = Date.now()
  log(`packing ${published.length} packages into ${destination} (pnpm pack)`)
  const filters = published.flatMap((entry) => ['--filter', entry.name])
  await run('npx', ['-y', 'pnpm@12.4.2', '-r', ...filters, 'pack', '--pack-destination', destination], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(`pnpm pack failed in ${root}:\n${error.stdout ?? ''}${error.stderr ?? error.message}`, {
      cause: error,
    })
  })
  const written = new Set(await readdir(destination))
  log(`packed ${published.length} packages in ${formatDuration(Date.now() - started)}`)
  return published.map((entry) => {
    const file = tarballName(entry.name, entry.version)
    if (!written.has(file))
      throw new Error(
        `pnpm pack wrote no ${file} for ${entry.name} in ${destination} (it holds: ${[...written].join(', ')})`,
      )
    return { ...entry, tarball: join(destination, file) }
  })
}

/** Progress goes to stderr; the tarballs' list to stdout. */
function log(line: string): void {
  console.error(line)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2).filter((arg) => arg !== '--')
  const skipBuild = args.includes('--skip-build')
  const rest = args.filter((arg) => arg !== '--skip-build')
  const root = resolve(import.meta.dirname, '..')
  if (rest.length !== 1 || rest[0]!.startsWith('-')) {
    console.error(
      'usage: pnpm pack-packages [--skip-build] <destination folder>   (builds every package first unless --skip-build)',
    )
    process.exitCode = 2
  } else {
    try {
      if (!skipBuild) {
        log('pack-packages: the tarballs hold dist, so every package is built first (--skip-build packs dist as it is)')
        await buildPackages(root, { log })
      }
      for (const entry of await packPackages(root, resolve(rest[0]!), log))
        console.log(`${entry.name}: ${entry.tarball}`)
    } catch (error) {
      console.error(`pack-packages: ${(error as Error).message}`)
      process.exitCode = 1
    }
  }
}
