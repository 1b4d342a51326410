import { fork } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '../../../..')

/**
 * Runs `fixtures/torn-writer.ts` in a process of its own, which writes `lines` of session `id`
 * into an uncommitted transaction of the SQLite database or PostgreSQL database at `location` and
 * is killed before it commits; resolves once it is gone.
 */
export function tornSqlWrite(
  kind: 'sqlite' | 'postgres',
  location: string,
  id: string,
  from: number,
  lines: readonly string[],
): Promise<'none'> {
  const child = fork(resolve(import.meta.dirname, 'fixtures/torn-writer.ts'), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((done, fail) => {
    let reply: { written?: boolean; error?: string } = {}
    child.once('message', (message) => void (reply = message as typeof reply))
    child.once('exit', (_code, signal) => {
      if (reply.written && signal === 'SIGKILL') done('none')
      else
        fail(new Error(`the torn writer did not write and die as planned: ${reply.error ?? `exit signal ${signal}`}`))
    })
    child.send({ kind, location, id, from, lines })
  })
}

/** What a crash in the middle of the file store's flush of `lines` leaves: the append cut inside its last line. */
export function tornFileWrite(file: string, lines: readonly string[]): 'complete lines' {
  const text = lines.map((line) => `${line}\n`).join('')
  appendFileSync(file, text.slice(0, text.length - Math.ceil((lines.at(-1)?.length ?? 0) / 2)))
  return 'complete lines'
}
