import type { ChildProcess } from 'node:child_process'
import { execFile, fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'

/** The repository root: children run from here so `--import tsx` resolves. */
export const ROOT = resolve(import.meta.dirname, '../../../..')

/** A script in `test/fixtures`, by file name. */
export function fixture(name: string): string {
  return resolve(import.meta.dirname, 'fixtures', name)
}

/** The pid of a process that has exited and been reaped: a lock owner that no longer runs. */
export async function deadPid(): Promise<number> {
  const child = spawn('true', { stdio: 'ignore' })
  await new Promise<void>((done, fail) => {
    child.once('exit', () => done())
    child.once('error', fail)
  })
  if (child.pid === undefined) throw new Error('could not start `true` to get a dead pid')
  return child.pid
}

/** Runs a TypeScript fixture in a child `node`, optionally under a file size limit of `fileBlocks` KiB. */
export function runFixture(
  name: string,
  args: readonly string[],
  options: { fileBlocks?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const command = `${options.fileBlocks === undefined ? '' : `ulimit -S -f ${options.fileBlocks}; `}exec node --import tsx "$0" "$@"`
  return new Promise((done, fail) => {
    execFile('bash', ['-c', command, fixture(name), ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return fail(error)
      done({ code: error ? (error.code as unknown as number) : 0, stdout, stderr })
    })
  })
}

/** Forks a TypeScript fixture with an IPC channel. */
export function forkFixture(name: string): ChildProcess {
  return fork(fixture(name), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
}

/** Sends `message` to `child` and resolves with its next reply. */
export function ask<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((done, fail) => {
    const onExit = (code: number | null) =>
      fail(new Error(`child ${child.pid} exited with ${code} before it answered ${JSON.stringify(message)}`))
    child.once('exit', onExit)
    child.once('message', (reply) => {
      child.off('exit', onExit)
      done(reply as T)
    })
    child.send(message as never)
  })
}

/**
 * Starts a zombie: a bash parent backgrounds a child that waits for a line on stdin, then
 * `exec`s `sleep`, which never reaps children. Once the parent is `sleep`, the line lets the
 * child exit, and it stays a zombie. `stop()` ends the parent (then init reaps the zombie).
 */
export async function startZombie(): Promise<{ pid: number; stop(): void }> {
  const parent = spawn('bash', ['-c', 'exec 3<&0; (read -r _ <&3) & echo $!; exec sleep 600'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const pid = await new Promise<number>((done, fail) => {
    parent.stdout.once('data', (chunk: Buffer) => done(Number(chunk.toString().trim())))
    parent.once('error', fail)
  })
  // Each wait is for a state this test brings about, not for time to pass.
  while (readComm(parent.pid as number) !== 'sleep') await new Promise((done) => setTimeout(done, 5))
  parent.stdin.write('exit\n')
  while (procState(pid) !== 'Z') await new Promise((done) => setTimeout(done, 5))
  return { pid, stop: () => void parent.kill('SIGKILL') }
}

function readComm(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined
  }
}

/** The state letter of `pid` in `/proc/<pid>/stat`, or `undefined` when it is gone. */
export function procState(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[0]
  } catch {
    return undefined
  }
}
