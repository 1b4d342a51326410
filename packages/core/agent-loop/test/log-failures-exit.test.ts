import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { useLogFailureLoops } from './log-failures-fixture.ts'
import { ROUTE } from './loop-fixture.ts'

// A host run as a child process (heavy set): its log refuses appends mid-turn, and it must still exit by itself.

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../../../..')
const { directory, fileLoop } = useLogFailureLoops()

describe('append and flush failures inside the loop are never unhandled rejections', () => {
  it('a host process whose log starts refusing appends mid-turn reports it, ends idle, exits 0 and releases its lock', async () => {
    const host = join(import.meta.dirname, 'fixtures/refusing-log-host.ts')
    const { stdout, stderr } = await run(join(root, 'node_modules/.bin/tsx'), [host, directory()], {
      cwd: import.meta.dirname,
    })
    expect(stderr).toBe('')
    const report = JSON.parse(stdout) as {
      status: string
      events: string[]
      error: { code: string; turn: number; message: string; unsent: unknown[] }
      reported: string[]
      warnings: string[]
    }
    expect(report.status).toBe('idle')
    expect(report.events).toEqual(['turn/start', 'user/message', 'request/header', 'assistant/message'])
    expect(report.error.code).toBe('LOG_FAILED')
    expect(report.error.turn).toBe(1)
    expect(report.error.message).toContain('tool/result at seq 4 refused')
    expect(report.error.message).toContain('turn/end at seq 4 refused')
    // The second followup was never logged: it is handed back, not dropped.
    expect(report.error.unsent).toEqual([[{ type: 'text', text: 'And then this one.' }]])
    // The turn failed (its tool/result was refused), then its end could not be logged either.
    expect(report.reported).toEqual(['TURN_FAILED', 'LOG_FAILED'])
    expect(report.warnings).toEqual([report.error.message])
    expect(existsSync(join(directory(), 'frozen.jsonl.lock'))).toBe(false)

    // What the log accepted was flushed on unload; a new host resumes it and closes the turn.
    const resumed = await fileLoop({ content: 'resumed' })
    const agent = await resumed.ctx.agentLoop.create('frozen', { ...ROUTE })
    expect(agent.session.events.map((event) => event.type)).toEqual([...report.events, 'turn/end'])
    expect(agent.session.events.at(-1)?.data).toMatchObject({ turn: 1, reason: 'interrupted', steps: 1 })
    resumed.assertClean()
  }, 30_000)
})
