import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { eventsOnDisk, foldBrackets, StallingServer } from './stalling-host.ts'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup()
})

/** Only a safety net against a child that never exits (the bug): the test asserts the exit code, not a time. */
const KILL_AFTER_MS = 120_000

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `unload-child.ts` in a Node process of its own and resolves when it exits (or was killed). */
function runChild(baseURL: string, directory: string): Promise<Exit> {
  const script = resolve(import.meta.dirname, 'unload-child.ts')
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', script, baseURL, directory],
      { cwd: resolve(import.meta.dirname, '../..'), timeout: KILL_AFTER_MS, killSignal: 'SIGKILL' },
      (_error, stdout, stderr) => done({ code: child.exitCode, signal: child.signalCode, stdout, stderr }),
    )
  })
}

describe('a host process that stops during a background fold', { timeout: KILL_AFTER_MS + 30_000 }, () => {
  it('exits by itself with code 0 after ctx.stop(), its stalled summary request aborted and the bracket closed on disk', async () => {
    const server = await StallingServer.start('until-summary')
    cleanups.push(() => server.close())
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-unload-exit-'))
    cleanups.push(() => rm(directory, { recursive: true, force: true }))
    const exit = await runChild(server.baseURL, directory)
    expect(exit.stdout.trim().split('\n')).toEqual([
      JSON.stringify({ turn: 'stop', openFolds: ['background'] }),
      JSON.stringify({ stopped: true }),
    ])
    expect({ code: exit.code, signal: exit.signal, stderr: exit.stderr }).toEqual({ code: 0, signal: null, stderr: '' })
    // The summary request reached the server and the child closed it.
    const summary = server.summaryIndex()
    expect(summary).toBeGreaterThanOrEqual(0)
    expect(server.summaries()).toHaveLength(1)
    await server.server.closed(summary)
    expect(server.server.openResponses).toBe(0)
    const events = eventsOnDisk(directory)
    expect(foldBrackets(events)).toEqual([
      expect.objectContaining({
        trigger: 'background',
        end: expect.objectContaining({ discarded: expect.anything() }),
      }),
    ])
    expect(events.filter((event) => event.type === 'compaction/summary')).toEqual([])
  })
})
