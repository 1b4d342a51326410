import { execFile, execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// A FIFO nobody writes blocks a reader forever and /dev/zero never ends: read in process, either
// would hang the test worker, so warmfold runs as a process here, killed if it outlives the
// timeout (a hang then fails the test with the signal instead of stalling the run).

const root = resolve(import.meta.dirname, '../../..')
const tsx = join(root, 'node_modules/.bin/tsx')
const main = join(root, 'packages/cli/src/main.ts')

let directory: string
let fifo: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-flag-fifo-'))
  fifo = join(directory, 'latency.json')
  execFileSync('mkfifo', [fifo])
})
afterAll(() => rm(directory, { recursive: true, force: true }))

function warmfold(argv: string[]): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((done) => {
    execFile(tsx, [main, ...argv], { cwd: root, timeout: 60_000 }, (error, _stdout, stderr) => {
      const failure = error as (Error & { code?: number | string; signal?: string }) | null
      const code = failure === null ? 0 : typeof failure.code === 'number' ? failure.code : null
      done({ code, signal: failure?.signal ?? null, stderr })
    })
  })
}

describe('a flag that names something other than a regular file', () => {
  it('warmfold bench --latency FIFO exits 2 at once naming the FIFO, without waiting for a writer', async () => {
    const result = await warmfold(['bench', '--latency', fifo, '--windows', '32000', '--steps', '2'])
    expect(result).toEqual({
      code: 2,
      signal: null,
      stderr:
        `warmfold: --latency ${JSON.stringify(fifo)} is a FIFO (named pipe), not a regular file; ` +
        'use sonnet-class | opus-class | llama-cpp-local | a JSON file\n',
    })
  }, 90_000)

  it('warmfold report --price /dev/zero exits 2 at once naming the device, without reading it', async () => {
    const result = await warmfold(['report', 'any.jsonl', '--price', '/dev/zero'])
    expect(result).toEqual({
      code: 2,
      signal: null,
      stderr:
        'warmfold: --price "/dev/zero" is a character device, not a regular file; ' +
        'use deepseek | openai | anthropic-5m | anthropic-1h | a JSON file\n',
    })
  }, 90_000)
})
