/**
 * The consumer test: warmfold as a new user gets it from the registry. Builds and packs every
 * published package, checks the tarballs, then in fresh projects OUTSIDE the workspace
 * installs them with npm together with `@cordisjs/core` and `schemastery` at the lowest and at
 * the highest version the peer ranges allow, typechecks a host (`tsc --strict --module
 * nodenext`) and runs it (scripts/consumer-host), and fails on a second copy of a shared
 * package. Last, the CLI alone: its installed size, `--version`, and `--cache llama` without
 * the optional real-cache package. Needs Node 20, npm and the registry.
 *
 *   pnpm consumer-test [--skip-build] [--keep]
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import type { PackedPackage } from './pack-packages.ts'
import { packPackages } from './pack-packages.ts'
import { buildPackages } from './build-packages.ts'
import { readTarball } from './read-tarball.ts'
import { publishedReadmeProblems } from './prepare-package-readme.ts'
import { startPostgres } from '@warmfold/test-utils'
import { workspacePackages } from './workspace-packages.ts'

const execFileAsync = promisify(execFile)
const root = resolve(import.meta.dirname, '..')
const started = performance.now()
/** The packages whose one copy the host and every plugin must share (peer dependencies). */
const SHARED = ['@cordisjs/core', 'schemastery'] as const
/** The CLI install, without the optional real-cache package, must stay below this (disk usage). */
const CLI_INSTALL_LIMIT_BYTES = 60 * 1000 * 1000
/** Installed in the host next to the tarballs: `tsc`, and an AI SDK 6 provider for the AI SDK adapter. */
// `ai@6` and the Anthropic provider for the AI SDK host of `@warmfold/ai-sdk` (the newest 6.x: what a
// host installing AI SDK 6 today gets).
const HOST_TOOLS = [
  'typescript@5.9.3',
  '@types/node@20.19.43',
  '@ai-sdk/openai-compatible@2.0.92',
  '@ai-sdk/anthropic@3.0.140',
  'ai@6',
]
/** Published, but not installed in the hosts: node-llama-cpp and its binaries are hundreds of MB (the workspace tests cover it). */
const NOT_IN_HOST = new Set(['@warmfold/llama-cache-server'])

const failures: string[] = []

function log(message: string): void {
  console.log(`[consumer-test +${((performance.now() - started) / 1000).toFixed(1)}s] ${message}`)
}

function check(name: string, ok: boolean, detail = ''): void {
  log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` (${detail})` : ''}`)
  if (!ok) failures.push(name)
}

/** The environment for npm in a host: pnpm's lifecycle variables of this script would leak into npm's config. */
function npmEnvironment(): NodeJS.ProcessEnv {
  const keep = new Set([
    'npm_config_registry',
    'npm_config_cache',
    'npm_config_userconfig',
    'npm_config_proxy',
    'npm_config_https_proxy',
    'npm_config_noproxy',
    'npm_config_cafile',
  ])
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_') || keep.has(key.toLowerCase())),
  )
}

interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `command` in `cwd`; never throws for a non-zero exit. */
async function run(command: string, args: readonly string[], cwd: string): Promise<Result> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, {
      cwd,
      env: npmEnvironment(),
      maxBuffer: 256 * 1024 * 1024,
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string; message: string }
    return {
      code: typeof failed.code === 'number' ? failed.code : 1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? failed.message,
    }
  }
}

/** Runs `command` and stops the whole test with its output when it fails. */
async function must(command: string, args: readonly string[], cwd: string): Promise<Result> {
  const result = await run(command, args, cwd)
  if (result.code !== 0)
    throw new Error(
      `${command} ${args.join(' ')} failed in ${cwd} (exit ${result.code}):\n${result.stdout}${result.stderr}`,
    )
  return result
}

/** The one range `field` of every published manifest gives `name` (they must agree). */
function peerRange(packed: readonly PackedPackage[], name: string): string {
  const ranges = new Set(
    packed
      .map((entry) => (entry.manifest.peerDependencies as Record<string, string> | undefined)?.[name])
      .filter((range): range is string => range !== undefined),
  )
  if (ranges.size !== 1)
    throw new Error(
      `the published packages must agree on one peer range for ${name}, found: ${[...ranges].join(', ') || 'none'}`,
    )
  return [...ranges][0]!
}

/** The lowest and highest published versions of `name` inside `range`, from the registry. */
async function versionBounds(name: string, range: string): Promise<{ lowest: string; highest: string }> {
  const { stdout } = await must('npm', ['view', `${name}@${range}`, 'version', '--json'], tmpdir())
  const parsed = JSON.parse(stdout) as string | string[]
  const versions = Array.isArray(parsed) ? parsed : [parsed]
  const sorted = versions.toSorted(byVersion)
  return { lowest: sorted[0]!, highest: sorted.at(-1)! }
}

/** Orders `major.minor.patch` versions (the registry's answers for a caret range hold no prerelease). */
function byVersion(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)]
  for (let index = 0; index < 3; index++) if (x[index] !== y[index]) return x[index]! - y[index]!
  return 0
}

/** Every installed copy of every package under `folder`/node_modules: name → versions and paths. */
async function installedCopies(folder: string): Promise<Map<string, { version: string; path: string }[]>> {
  const copies = new Map<string, { version: string; path: string }[]>()
  const visit = async (modules: string): Promise<void> => {
    if (!existsSync(modules)) return
    for (const entry of await readdir(modules, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue
      const path = join(modules, entry.name)
      if (entry.name.startsWith('@') && entry.isDirectory()) {
        for (const scoped of await readdir(path, { withFileTypes: true })) await visitPackage(join(path, scoped.name))
      } else if (entry.isDirectory()) {
        await visitPackage(path)
      }
    }
  }
  const visitPackage = async (path: string): Promise<void> => {
    const manifestPath = join(path, 'package.json')
    if (!existsSync(manifestPath)) return
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { name: string; version: string }
    copies.set(manifest.name, [...(copies.get(manifest.name) ?? []), { version: manifest.version, path }])
    await visit(join(path, 'node_modules'))
  }
  await visit(join(folder, 'node_modules'))
  return copies
}

/** Bytes under `folder`: as `du` counts them (allocated blocks) and as files say (apparent). */
async function folderSize(folder: string): Promise<{ disk: number; apparent: number }> {
  let disk = 0
  let apparent = 0
  const visit = async (path: string): Promise<void> => {
    const stats = await lstat(path)
    disk += stats.blocks * 512
    apparent += stats.size
    if (stats.isDirectory()) for (const entry of await readdir(path)) await visit(join(path, entry))
  }
  await visit(folder)
  return { disk, apparent }
}

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`

/** The published packages' tarballs: contents, license, README, manifest fields and peers. */
async function checkTarballs(packed: readonly PackedPackage[], destination: string): Promise<void> {
  const license = await readFile(join(root, 'LICENSE'), 'utf8')
  const all = await workspacePackages(root)
  const privateNames = all.filter((entry) => entry.private).map((entry) => entry.name)
  const tarballs = (await readdir(destination)).filter((file) => file.endsWith('.tgz'))
  check(
    'only published packages are packed (no private one)',
    tarballs.length === packed.length,
    `${tarballs.length} tarballs for ${packed.length} published packages; private: ${privateNames.join(', ')}`,
  )
  for (const entry of packed) {
    const files = await readTarball(entry.tarball)
    const problems: string[] = []
    const extra = [...files.keys()].filter(
      (path) => !/^package\/(package\.json|README\.md|LICENSE|dist\/.+)$/.test(path),
    )
    if (extra.length) problems.push(`unexpected files ${extra.join(', ')}`)
    if (files.get('package/LICENSE')?.toString('utf8') !== license)
      problems.push('LICENSE missing or not the root LICENSE')
    const readme = files.get('package/README.md')?.toString('utf8') ?? ''
    problems.push(...publishedReadmeProblems(readme).map((problem) => `README ${problem}`))
    if (!readme.includes('ESM only')) problems.push('README does not say "ESM only"')
    const text = files.get('package/package.json')?.toString('utf8') ?? '{}'
    const manifest = JSON.parse(text) as Record<string, any>
    if (text.includes('workspace:')) problems.push('package.json keeps a workspace: range')
    if (manifest.type !== 'module') problems.push('package.json type is not "module"')
    if (
      manifest.repository?.url !== 'git+https://github.com/warmfold/warmfold.git' ||
      manifest.repository?.directory !== entry.folder
    )
      problems.push(`repository ${JSON.stringify(manifest.repository)}`)
    if (typeof manifest.homepage !== 'string' || !manifest.homepage.startsWith('https://github.com/warmfold/warmfold'))
      problems.push(`homepage ${JSON.stringify(manifest.homepage)}`)
    if (manifest.bugs?.url !== 'https://github.com/warmfold/warmfold/issues')
      problems.push(`bugs ${JSON.stringify(manifest.bugs)}`)
    for (const [subpath, target] of Object.entries((manifest.exports ?? {}) as Record<string, any>)) {
      if (typeof target !== 'object' || !target.import || !target.types || 'require' in target)
        problems.push(`exports["${subpath}"] must have import and types and no require: ${JSON.stringify(target)}`)
    }
    // A package whose code imports a shared package must take it as a peer; an application (a bin) provides it.
    const code = [...files]
      .filter(([path]) => path.endsWith('.js'))
      .map(([, content]) => content.toString('utf8'))
      .join('\n')
    for (const shared of SHARED) {
      const imports = code.includes(`from "${shared}"`) || code.includes(`from '${shared}'`)
      if (manifest.bin) continue
      if (manifest.dependencies?.[shared])
        problems.push(`${shared} is a dependency (a second copy for the host); it must be a peer`)
      if (imports && !manifest.peerDependencies?.[shared])
        problems.push(`imports ${shared} without a peer dependency on it`)
    }
    if (manifest.bin) {
      for (const shared of SHARED)
        if (manifest.dependencies?.[shared] !== peerRange(packed, shared))
          problems.push(
            `the application must depend on ${shared} with the peer range ${peerRange(packed, shared)}, has ${manifest.dependencies?.[shared]}`,
          )
    }
    check(`tarball ${entry.name}`, problems.length === 0, problems.join('; ') || `${files.size} files`)
  }
  const cli = packed.find((entry) => entry.name === '@warmfold/cli')
  const cliManifest = cli?.manifest as Record<string, any> | undefined
  check(
    '@warmfold/llama-cache-server is an optional peer of the CLI, not a dependency',
    !cliManifest?.dependencies?.['@warmfold/llama-cache-server'] &&
      cliManifest?.peerDependenciesMeta?.['@warmfold/llama-cache-server']?.optional === true,
  )
}

/** A fresh npm project in `folder` with `dependencies` installed. */
async function npmProject(folder: string, dependencies: readonly string[]): Promise<void> {
  await mkdir(folder, { recursive: true })
  await writeFile(
    join(folder, 'package.json'),
    `${JSON.stringify({ name: 'warmfold-consumer', private: true, type: 'module' }, null, 2)}\n`,
  )
  await must('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...dependencies], folder)
}

/** One host: install, single copies, typecheck, run. */
async function hostRun(
  label: string,
  folder: string,
  packed: readonly PackedPackage[],
  shared: Record<string, string>,
): Promise<void> {
  log(
    `host ${label}: npm install of ${packed.length} tarballs with ${Object.entries(shared)
      .map(([name, version]) => `${name}@${version}`)
      .join(', ')} in ${folder}`,
  )
  await npmProject(folder, [
    ...packed.filter((entry) => !NOT_IN_HOST.has(entry.name)).map((entry) => entry.tarball),
    ...Object.entries(shared).map(([name, version]) => `${name}@${version}`),
    ...HOST_TOOLS,
  ])
  const copies = await installedCopies(folder)
  for (const [name, version] of Object.entries(shared)) {
    const found = copies.get(name) ?? []
    check(
      `host ${label}: one copy of ${name}, the host's ${version}`,
      found.length === 1 && found[0]!.version === version,
      found.map((copy) => `${copy.version} at ${copy.path.slice(folder.length + 1)}`).join(', '),
    )
  }
  const duplicated = [...copies].filter(([name, found]) => name.startsWith('@warmfold/') && found.length > 1)
  check(
    `host ${label}: one copy of every @warmfold package`,
    duplicated.length === 0,
    duplicated.map(([name, found]) => `${name} ×${found.length}`).join(', '),
  )
  const lsResult = await run('npm', ['ls', '@cordisjs/core', '--all'], folder)
  check(
    `host ${label}: npm ls @cordisjs/core --all is clean`,
    lsResult.code === 0,
    lsResult.code === 0 ? '' : `${lsResult.stdout}${lsResult.stderr}`,
  )
  for (const file of ['host.ts', 'contract-only-engine.ts', 'sql-stores.ts', 'wire-server.ts', 'ai-sdk-host.ts'])
    await copyFile(join(root, 'scripts', 'consumer-host', file), join(folder, file))
  const tsc = await run(
    join(folder, 'node_modules', '.bin', 'tsc'),
    [
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
      '--outDir',
      'dist',
      'host.ts',
      'contract-only-engine.ts',
      'sql-stores.ts',
      'wire-server.ts',
      'ai-sdk-host.ts',
    ],
    folder,
  )
  check(
    `host ${label}: tsc --strict --module nodenext --moduleResolution nodenext`,
    tsc.code === 0,
    tsc.code === 0 ? '' : `\n${tsc.stdout}${tsc.stderr}`,
  )
  if (tsc.code !== 0 && !existsSync(join(folder, 'dist', 'host.js'))) return
  log(`host ${label}: node dist/host.js`)
  const host = await run(process.execPath, [join('dist', 'host.js')], folder)
  for (const line of host.stdout.trimEnd().split('\n')) console.log(`  [${label}] ${line}`)
  if (host.stderr.trim())
    for (const line of host.stderr.trimEnd().split('\n')) console.log(`  [${label} stderr] ${line}`)
  check(
    `host ${label}: runs every plugin through a compaction and a swapped engine`,
    host.code === 0,
    `exit ${host.code}`,
  )
  log(`host ${label}: node dist/ai-sdk-host.js`)
  const aiSdkHost = await run(process.execPath, [join('dist', 'ai-sdk-host.js')], folder)
  for (const line of aiSdkHost.stdout.trimEnd().split('\n')) console.log(`  [${label} ai-sdk] ${line}`)
  if (aiSdkHost.stderr.trim())
    for (const line of aiSdkHost.stderr.trimEnd().split('\n')) console.log(`  [${label} ai-sdk stderr] ${line}`)
  check(
    `host ${label}: an AI SDK 6 host from the registry runs warm folds through the packed @warmfold/ai-sdk`,
    aiSdkHost.code === 0,
    `exit ${aiSdkHost.code}`,
  )
}

/** The CLI alone from its tarballs: size without the real-cache package, `--version`, `--cache llama` and a probe dialect without its adapter refused by name, a short bench. */
async function cliRun(folder: string, packed: readonly PackedPackage[]): Promise<void> {
  const byName = new Map(packed.map((entry) => [entry.name, entry]))
  const closure = new Set<string>()
  const add = (name: string): void => {
    const entry = byName.get(name)
    if (!entry || closure.has(name)) return
    closure.add(name)
    for (const dependency of Object.keys((entry.manifest.dependencies ?? {}) as Record<string, string>)) add(dependency)
  }
  add('@warmfold/cli')
  log(
    `cli: npm install of @warmfold/cli and the tarballs of its dependencies (${[...closure].join(', ')}) in ${folder}`,
  )
  await npmProject(
    folder,
    [...closure].map((name) => byName.get(name)!.tarball),
  )
  const copies = await installedCopies(folder)
  const heavy = [
    '@warmfold/llama-cache-server',
    'node-llama-cpp',
    '@warmfold/llm-anthropic',
    '@warmfold/llm-google',
    '@google/genai',
  ].filter((name) => copies.has(name))
  check(
    'cli: the plain install has no real-cache package and no optional probe adapter',
    heavy.length === 0,
    heavy.join(', '),
  )
  const size = await folderSize(join(folder, 'node_modules'))
  check(
    `cli: node_modules under ${megabytes(CLI_INSTALL_LIMIT_BYTES)}`,
    size.disk < CLI_INSTALL_LIMIT_BYTES,
    `${megabytes(size.disk)} on disk, ${megabytes(size.apparent)} of files, ${copies.size} packages`,
  )
  const warmfold = join(folder, 'node_modules', '.bin', 'warmfold')
  const version = await run(warmfold, ['--version'], folder)
  const expected = byName.get('@warmfold/cli')!.manifest.version as string
  check(
    'cli: warmfold --version prints the version',
    version.code === 0 && version.stdout.trim().endsWith(expected),
    `exit ${version.code}: ${(version.stdout + version.stderr).trim()}`,
  )
  const llama = await run(warmfold, ['bench', '--cache', 'llama'], folder)
  check(
    'cli: warmfold bench --cache llama without the package exits 1 naming it',
    llama.code === 1 && llama.stderr.includes('npm install @warmfold/llama-cache-server'),
    `exit ${llama.code}: ${llama.stderr.trim()}`,
  )
  const gemini = await run(
    warmfold,
    ['bench', '--cache-probe', 'http://127.0.0.1:9', '--probe-dialect', 'gemini'],
    folder,
  )
  check(
    'cli: warmfold bench --probe-dialect gemini without the adapter exits 1 naming it',
    gemini.code === 1 && gemini.stderr.includes('npm install @warmfold/llm-google'),
    `exit ${gemini.code}: ${gemini.stderr.trim()}`,
  )
  const bench = await run(warmfold, ['bench', '--windows', '8000', '--steps', '20', '--strategies', 'warmfold'], folder)
  check(
    'cli: a short simulator bench runs',
    bench.code === 0 && bench.stdout.includes('warmfold'),
    `exit ${bench.code}${bench.code === 0 ? '' : `: ${bench.stderr.trim()}`}`,
  )
}

async function main(): Promise<void> {
  const skipBuild = process.argv.includes('--skip-build')
  const keep = process.argv.includes('--keep')
  const work = await mkdtemp(join(tmpdir(), 'warmfold-consumer-'))
  log(`working in ${work} (outside the workspace ${root})`)
  try {
    if (skipBuild) log('build skipped (--skip-build): packing the dist folders as they are')
    else await buildPackages(root, { log })
    const destination = join(work, 'tarballs')
    const packed = await packPackages(root, destination, log)
    log(`packed ${packed.length}: ${packed.map((entry) => entry.name).join(', ')}`)
    await checkTarballs(packed, destination)
    const bounds: Record<string, { lowest: string; highest: string }> = {}
    for (const name of SHARED) {
      const range = peerRange(packed, name)
      bounds[name] = await versionBounds(name, range)
      log(
        `${name}: peer range ${range} → lowest ${bounds[name].lowest}, highest ${bounds[name].highest} on the registry`,
      )
    }
    // The hosts keep sessions in a real PostgreSQL server too, started here for both and stopped after.
    const postgres = await startPostgres()
    process.env.WARMFOLD_CONSUMER_POSTGRES_URL = postgres.url
    try {
      await hostRun(
        'lowest',
        join(work, 'host-lowest'),
        packed,
        Object.fromEntries(SHARED.map((name) => [name, bounds[name]!.lowest])),
      )
      await hostRun(
        'highest',
        join(work, 'host-highest'),
        packed,
        Object.fromEntries(SHARED.map((name) => [name, bounds[name]!.highest])),
      )
    } finally {
      await postgres.stop()
    }
    await cliRun(join(work, 'cli'), packed)
  } finally {
    if (keep) log(`kept ${work}`)
    else await rm(work, { recursive: true, force: true })
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  if (failures.length) {
    log(
      `FAILED ${failures.length} check(s) in ${seconds} s:\n${failures.map((failure) => `  - ${failure}`).join('\n')}`,
    )
    process.exitCode = 1
  } else log(`passed in ${seconds} s`)
}

await main()
