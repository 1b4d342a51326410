import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { SessionError } from '@warmfold/session'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AgentError } from '../src/index.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { callTool, mountLoop, ROUTE } from './loop-fixture.ts'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../../../..')

let directory: string
const harnesses: LoopHarness[] = []
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => void unhandled.push(reason)

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-log-failures-'))
  unhandled.length = 0
  process.on('unhandledRejection', onUnhandled)
})
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
  // One macrotask lets a rejection nobody handled reach the listener before it is removed.
  await new Promise((resolve) => setImmediate(resolve))
  process.off('unhandledRejection', onUnhandled)
  await rm(directory, { recursive: true, force: true })
  expect(unhandled).toEqual([])
})

async function fileLoop(responses: Parameters<typeof mountLoop>[0]): Promise<LoopHarness> {
  const harness = await mountLoop(responses, { store: 'file', directory })
  harnesses.push(harness)
  return harness
}

function lastTurnEnd(harness: LoopHarness, sessionId: string) {
  return harness.ctx.sessions
    .open(sessionId)
    .then((session) => session.events.filter((event) => event.type === 'turn/end').at(-1)?.data)
}

describe('append and flush failures inside the loop are never unhandled rejections', () => {
  it('a host process whose log starts refusing appends mid-turn reports it, ends idle, exits 0 and releases its lock', async () => {
    const host = join(import.meta.dirname, 'fixtures/refusing-log-host.ts')
    const { stdout, stderr } = await run(join(root, 'node_modules/.bin/tsx'), [host, directory], {
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
    expect(existsSync(join(directory, 'frozen.jsonl.lock'))).toBe(false)

    // What the log accepted was flushed on unload; a new host resumes it and closes the turn.
    const resumed = await fileLoop({ content: 'resumed' })
    const agent = await resumed.ctx.agentLoop.create('frozen', { ...ROUTE })
    expect(agent.session.events.map((event) => event.type)).toEqual([...report.events, 'turn/end'])
    expect(agent.session.events.at(-1)?.data).toMatchObject({ turn: 1, reason: 'interrupted', steps: 1 })
    resumed.assertClean()
  }, 30_000)

  it('ends the turn with the logged reason when an append is refused once, and the next turn runs', async () => {
    const harness = await fileLoop((_request, index) =>
      index === 0 ? callTool('call-0', 'read', '{}') : { content: `answer ${index}` },
    )
    let refuseOnce = false
    harness.ctx.tools.register({
      name: 'read',
      description: '',
      parameters: { type: 'object' },
      execute: () => {
        refuseOnce = true
        return 'contents'
      },
    })
    const agent = await harness.ctx.agentLoop.create('refused-once', { ...ROUTE })
    agent.session.addValidator((candidate) => {
      if (refuseOnce && candidate.type === 'tool/result') {
        refuseOnce = false
        throw new Error(`test validator: ${candidate.type} refused`)
      }
    })
    agent.followup('one')
    await agent.whenIdle()
    expect(await lastTurnEnd(harness, 'refused-once')).toEqual({
      turn: 1,
      reason: 'error',
      steps: 1,
      errorCode: 'UNEXPECTED',
      error: 'test validator: tool/result refused',
    })
    expect(agent.lastError).toMatchObject({ code: 'TURN_FAILED', turn: 1, turnErrorCode: 'UNEXPECTED', unsent: [] })
    expect(agent.status).toBe('idle')
    agent.followup('two')
    await agent.whenIdle()
    expect(await lastTurnEnd(harness, 'refused-once')).toMatchObject({ turn: 2, reason: 'stop' })
    harness.assertClean()
  })

  it('reports a session closed under a running turn, hands back the queue and goes idle', async () => {
    const harness = await fileLoop((_request, index) =>
      index === 0 ? callTool('call-0', 'close', '{}') : { content: 'never reached' },
    )
    const errors: AgentError[] = []
    harness.ctx.on('agent/error', (_agent, error) => void errors.push(error))
    const agent = await harness.ctx.agentLoop.create('closed', { ...ROUTE })
    harness.ctx.tools.register({
      name: 'close',
      description: '',
      parameters: { type: 'object' },
      execute: async () => {
        await harness.ctx.sessions.close(agent.session)
        return 'closed'
      },
    })
    agent.followup('one')
    agent.followup('queued')
    await agent.whenIdle()
    expect(agent.status).toBe('idle')
    const error = agent.lastError
    expect(error?.code).toBe('LOG_FAILED')
    expect(SessionError.isInstance(error?.cause) && error.cause.code).toBe('CLOSED')
    expect(error?.unsent.map((message) => message.content)).toEqual([[{ type: 'text', text: 'queued' }]])
    // The turn failed on the closed session, and then its end could not be logged: both are reported, the log failure last.
    expect(errors.map((reported) => reported.code)).toEqual(['TURN_FAILED', 'LOG_FAILED'])
    expect(errors.at(-1)).toBe(error)
    expect(harness.warnings).toEqual([error?.message])
    expect(existsSync(join(directory, 'closed.jsonl.lock'))).toBe(false)
  })

  it('reports a turn that cannot start after maintenance (runMaintenance drains the queue)', async () => {
    const harness = await fileLoop({ content: 'ok' })
    const agent = await harness.ctx.agentLoop.create('after-maintenance', { ...ROUTE })
    let frozen = false
    agent.session.addValidator((candidate) => {
      if (frozen) throw new Error(`test validator: ${candidate.type} refused`)
    })
    await agent.runMaintenance(async () => {
      agent.followup('queued during maintenance')
      frozen = true
    })
    await agent.whenIdle()
    expect(agent.status).toBe('idle')
    expect(agent.lastError?.message).toBe(
      'agent after-maintenance: logging the start of turn 1 failed: test validator: turn/start refused',
    )
    expect(agent.lastError?.unsent.map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'queued during maintenance' }],
    ])
    expect(harness.adapter.requests).toHaveLength(0)
    // A host that repairs the log and queues the handed-back message again from agent/error:
    // the agent picks it up as soon as the failed drain ends.
    harness.ctx.on('agent/error', (erring, error) => {
      frozen = false
      for (const message of error.unsent) erring.followup(message)
    })
    agent.followup('refused once more')
    await agent.whenIdle()
    expect(harness.warnings).toHaveLength(2)
    expect(agent.status).toBe('idle')
    expect(agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)).toEqual([
      { turn: 1, reason: 'stop', steps: 1 },
    ])
    expect(harness.adapter.requests).toHaveLength(1)
  })
})
