import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { resolve } from 'node:path'
import type { ChildBackendSpec } from './backend-harness.ts'

/** The repository root: children run from here so `--import tsx` resolves. */
const ROOT = resolve(import.meta.dirname, '../../../..')

/** A running contract child (see `contract-child.ts`). */
export interface ContractChild {
  readonly process: ChildProcess
  /** Sends a command and resolves with the next reply. */
  ask(command: unknown): Promise<Record<string, unknown>>
  /** The next reply, without sending anything. */
  next(): Promise<Record<string, unknown>>
  /** kill -9, resolved once the process is gone. */
  kill(): Promise<void>
}

/** Starts a child process that builds a backend from `spec` and waits until it is ready. */
export async function startContractChild(spec: ChildBackendSpec): Promise<ContractChild> {
  const child = fork(resolve(import.meta.dirname, 'contract-child.ts'), [JSON.stringify(spec)], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const next = () =>
    new Promise<Record<string, unknown>>((done, fail) => {
      const onExit = (code: number | null) =>
        fail(new Error(`contract child ${child.pid} exited with ${code} before it answered`))
      child.once('exit', onExit)
      child.once('message', (reply) => {
        child.off('exit', onExit)
        done(reply as Record<string, unknown>)
      })
    })
  const ready = await next()
  if (ready.ready !== true) throw new Error(`contract child ${child.pid} failed to start: ${JSON.stringify(ready)}`)
  return {
    process: child,
    next,
    ask(command) {
      const reply = next()
      child.send(command as never)
      return reply
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const gone = new Promise<void>((done) => child.once('exit', () => done()))
      child.kill('SIGKILL')
      await gone
    },
  }
}
