/**
 * Builds every workspace package that has a `build` script (what `pnpm build` builds), each after
 * the workspace packages it depends on, a few at a time, and says what it is doing: one line when
 * a package starts and one when it is built, with its own time and the time since the start. A
 * whole build takes minutes on 2 cores; `pnpm build` prints nothing until the end.
 */
import { spawn } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { delimiter, join } from 'node:path'
import type { WorkspacePackage } from './workspace-packages.ts'
import { workspacePackages } from './workspace-packages.ts'

/** Where the progress goes, and the clock it is timed on (milliseconds). */
export interface BuildProgress {
  /** One line per event, without a newline. */
  readonly log: (line: string) => void
  readonly now?: () => number
  /** Builds run at once; default the number of cores, at most 4 (pnpm's default). */
  readonly concurrency?: number
}

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const

/** `ms` as `12.3 s`, or `4 min 05 s` from a minute on. */
export function formatDuration(ms: number): string {
  const seconds = ms / 1000
  if (seconds < 60) return `${seconds.toFixed(1)} s`
  const whole = Math.round(seconds)
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`
}

/**
 * The packages to build, in an order where each comes after the workspace packages it depends on
 * (ties by folder), each with those it waits for.
 * @throws Error naming the packages of a dependency cycle.
 */
export function buildOrder(packages: readonly WorkspacePackage[]): Array<{ entry: WorkspacePackage; after: string[] }> {
  const building = packages.filter((entry) => typeof scriptsOf(entry).build === 'string')
  const names = new Set(building.map((entry) => entry.name))
  const waits = new Map(
    building.map((entry) => {
      const dependencies = DEPENDENCY_FIELDS.flatMap((field) =>
        Object.keys((entry.manifest[field] ?? {}) as Record<string, unknown>),
      )
      return [entry.name, [...new Set(dependencies)].filter((name) => names.has(name) && name !== entry.name)]
    }),
  )
  const ordered: Array<{ entry: WorkspacePackage; after: string[] }> = []
  const placed = new Set<string>()
  while (ordered.length < building.length) {
    const next = building.filter(
      (entry) => !placed.has(entry.name) && waits.get(entry.name)!.every((name) => placed.has(name)),
    )
    if (!next.length) {
      const stuck = building.filter((entry) => !placed.has(entry.name)).map((entry) => entry.name)
      throw new Error(
        `the workspace packages ${stuck.join(', ')} depend on each other in a cycle: none can build first`,
      )
    }
    for (const entry of next) {
      placed.add(entry.name)
      ordered.push({ entry, after: waits.get(entry.name)! })
    }
  }
  return ordered
}

/**
 * Runs the `build` script of every package under `root/packages` that has one, as `pnpm run`
 * would (in the package's folder, with its and the root's `node_modules/.bin` on the PATH).
 * @throws Error naming the package, its exit code and the end of its output when a build fails
 *   (builds already running finish first; none starts after it).
 */
export async function buildPackages(root: string, progress: BuildProgress): Promise<void> {
  const { log, now = Date.now, concurrency = Math.min(4, availableParallelism()) } = progress
  const order = buildOrder(await workspacePackages(root))
  const started = now()
  const total = order.length
  const width = String(total).length
  const done = new Set<string>()
  const running = new Map<string, Promise<void>>()
  // An object, so the loop sees what the builds' callbacks set.
  const state: { failure?: Error; finished: number } = { finished: 0 }
  log(`building ${total} packages, ${concurrency} at a time, each after the workspace packages it depends on`)
  const pending = [...order]
  while ((pending.length && !state.failure) || running.size) {
    const ready = state.failure ? -1 : pending.findIndex(({ after }) => after.every((name) => done.has(name)))
    if (ready >= 0 && running.size < concurrency) {
      const [{ entry }] = pending.splice(ready, 1) as [(typeof order)[number]]
      const begun = now()
      log(`  ${entry.name}: building (${entry.folder})`)
      const build = runScript(root, entry).then(
        () => {
          done.add(entry.name)
          state.finished++
          const counter = `${String(state.finished).padStart(width)}/${total}`
          log(
            `  [${counter}] ${entry.name}: built in ${formatDuration(now() - begun)} (${formatDuration(now() - started)} in all)`,
          )
        },
        (error: Error) => {
          state.failure ??= error
        },
      )
      running.set(
        entry.name,
        build.finally(() => running.delete(entry.name)),
      )
      continue
    }
    if (!running.size)
      throw new Error(`nothing left to build can start: ${pending.map(({ entry }) => entry.name).join(', ')}`)
    await Promise.race(running.values())
  }
  if (state.failure) throw state.failure
  log(`built ${total} packages in ${formatDuration(now() - started)}`)
}

function scriptsOf(entry: WorkspacePackage): Record<string, unknown> {
  return (entry.manifest.scripts ?? {}) as Record<string, unknown>
}

/** Runs `entry`'s build script; rejects with its output's last lines when it fails. */
function runScript(root: string, entry: WorkspacePackage): Promise<void> {
  const folder = join(root, entry.folder)
  const path = [join(folder, 'node_modules/.bin'), join(root, 'node_modules/.bin'), process.env.PATH ?? '']
  const child = spawn(String(scriptsOf(entry).build), {
    cwd: folder,
    shell: true,
    env: { ...process.env, PATH: path.join(delimiter) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const keep = (chunk: Buffer) => void (output = (output + chunk.toString('utf8')).slice(-16_384))
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  return new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`cannot run the build of ${entry.name}: ${error.message}`)))
    child.once('close', (code, signal) => {
      if (code === 0) return resolve()
      const tail = output.trimEnd().split('\n').slice(-40).join('\n')
      reject(
        new Error(`the build of ${entry.name} (${entry.folder}) failed (${signal ?? `exit code ${code}`}):\n${tail}`),
      )
    })
  })
}
