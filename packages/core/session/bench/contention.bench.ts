import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, bench, describe } from 'vitest'
import { JsonlFileBackend } from '../src/index.ts'

const APPENDS = 1000
const root = resolve(import.meta.dirname, '../../../..')
const directory = mkdtempSync(join(tmpdir(), 'warmfold-contention-bench-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

interface WriterReport {
  refusals: number
  appendMs: number
  openWaitMs: number
  error?: string
}

function writer(): ChildProcess {
  return fork(resolve(import.meta.dirname, 'contention-writer.ts'), [], { cwd: root, execArgv: ['--import', 'tsx'] })
}

/**
 * Two processes race for one session; each appends APPENDS events with a flush (fsync) after
 * every append. The loser must be refused with LOCKED until the winner closes, then writes
 * its own; the file must reopen with exactly 2 × APPENDS events, each writer's in one run.
 */
async function contend(id: string): Promise<void> {
  const setup = new JsonlFileBackend(directory)
  setup.releaseSync(await setup.create(id, {}))
  const writers = [writer(), writer()]
  try {
    await Promise.all(writers.map((child) => once(child, 'message')))
    const reports = await Promise.all(
      writers.map(async (child, index) => {
        const reply = once(child, 'message')
        child.send({ directory, id, count: APPENDS, name: `w${index}` })
        return (await reply)[0] as WriterReport
      }),
    )
    for (const report of reports) if (report.error) throw new Error(`a writer failed: ${report.error}`)
    const reader = new JsonlFileBackend(directory)
    const session = await reader.open(id, {}, () => {})
    const owners = session.deriveMessages().map((message) => message.id.split('-')[0])
    reader.releaseSync(session)
    const runs = owners.filter((owner, index) => index === 0 || owner !== owners[index - 1]).length
    if (owners.length !== 2 * APPENDS || runs !== 2)
      throw new Error(`corrupted: ${owners.length} events in ${runs} runs, expected ${2 * APPENDS} in 2`)
    const refused = reports.map((report) => report.refusals)
    if (Math.max(...refused) === 0) throw new Error('no writer was ever refused: the two writers did not overlap')
    const rates = reports.map((report) => Math.round(APPENDS / (report.appendMs / 1000)))
    console.log(
      `[contention ${id}] LOCKED refusals per writer ${refused.join(' / ')}; appends/s with fsync per append ${rates.join(' / ')}; ${2 * APPENDS} events reopened intact`,
    )
  } finally {
    for (const child of writers) child.kill()
  }
}

describe('JSONL file store under contention', () => {
  let run = 0
  bench(
    `2 processes × ${APPENDS} appends, flush (fsync) after each, one session`,
    async () => {
      await contend(`contended-${run++}`)
    },
    { iterations: 3, time: 0, warmupIterations: 0 },
  )
})
