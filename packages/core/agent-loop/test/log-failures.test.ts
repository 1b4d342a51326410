import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { SessionError } from '@warmfold/session'
import { describe, expect, it } from 'vitest'
import type { AgentError } from '../src/index.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { useLogFailureLoops } from './log-failures-fixture.ts'
import { callTool, ROUTE } from './loop-fixture.ts'

const { directory, fileLoop } = useLogFailureLoops()

function lastTurnEnd(harness: LoopHarness, sessionId: string) {
  return harness.ctx.sessions
    .open(sessionId)
    .then((session) => session.events.filter((event) => event.type === 'turn/end').at(-1)?.data)
}

describe('append and flush failures inside the loop are never unhandled rejections', () => {
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
    expect(existsSync(join(directory(), 'closed.jsonl.lock'))).toBe(false)
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
