import { rmSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { constants, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/** Where the demo writes its session log. */
export interface DemoFolder {
  readonly directory: string
  /** A folder the demo made, removed when the process ends; false for a folder the user named (kept). */
  readonly temporary: boolean
}

/**
 * The folder for the demo's session log: the one the user named (kept), else a new
 * `warmfold-demo-*` folder in the temp directory that is removed however the process ends:
 * normally, with `process.exit`, on an uncaught error, or on Ctrl-C (SIGINT), SIGTERM or SIGHUP
 * (exit code 128 + the signal's number, as a shell reports it).
 */
export async function demoFolder(given: string | undefined): Promise<DemoFolder> {
  if (given !== undefined) return { directory: resolve(given), temporary: false }
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-demo-'))
  // 'exit' runs synchronously on every way out, including uncaught errors; signals end the
  // process without it unless handled, so each one exits explicitly.
  process.once('exit', () => rmSync(directory, { recursive: true, force: true }))
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => process.exit(128 + constants.signals[signal]))
  }
  return { directory, temporary: true }
}
