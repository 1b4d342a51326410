import { LlmError } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { AgentError, TurnResult } from '../src/index.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { mountLoop, ROUTE } from './loop-fixture.ts'

const harnesses: LoopHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harnessWith(
  responses: Parameters<typeof mountLoop>[0],
): Promise<LoopHarness & { reported: AgentError[] }> {
  const harness = await mountLoop(responses)
  harnesses.push(harness)
  const reported: AgentError[] = []
  harness.ctx.on('agent/error', (_agent, error) => void reported.push(error))
  return Object.assign(harness, { reported })
}

describe('what a followup resolves with', () => {
  it('a turn that stops: its turn/end, and no error anywhere', async () => {
    const harness = await harnessWith({ content: 'hello' })
    const agent = await harness.ctx.agentLoop.create('stop', { ...ROUTE })
    const result = await agent.followup('hi')
    expect(result).toEqual({ turn: 1, reason: 'stop', steps: 1 })
    expect(agent.session.events.at(-1)?.data).toEqual({ turn: 1, reason: 'stop', steps: 1 })
    expect(agent.lastError).toBeUndefined()
    expect(harness.reported).toEqual([])
    harness.assertClean()
  })

  it('a request the provider refuses (401): the code, the message and the LlmError itself; lastError and agent/error say it too', async () => {
    const denied = new LlmError('AUTH', 'scripted: 401 invalid x-api-key')
    const harness = await harnessWith([{ error: denied }, { content: 'after the key was fixed' }])
    const agent = await harness.ctx.agentLoop.create('denied', { ...ROUTE })
    const failed = agent.followup('hi')
    const next = agent.followup('again')
    const result = await failed
    expect(result).toEqual({
      turn: 1,
      reason: 'error',
      steps: 1,
      errorCode: 'AUTH',
      error: 'scripted: 401 invalid x-api-key',
      cause: denied,
    })
    // lastError is set before the failed turn's promise resolves.
    expect(agent.lastError).toMatchObject({ code: 'TURN_FAILED', turn: 1, turnErrorCode: 'AUTH', cause: denied })
    expect(agent.lastError?.message).toBe('agent denied: turn 1 failed (AUTH): scripted: 401 invalid x-api-key')
    expect(harness.reported).toEqual([agent.lastError])
    // The next queued followup still runs; lastError keeps the latest failure.
    expect(await next).toEqual({ turn: 2, reason: 'stop', steps: 1 })
    expect(agent.lastError?.turn).toBe(1)
    // The log has the same facts, without the thrown value.
    const ends = agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)
    expect(ends[0]).toEqual({
      turn: 1,
      reason: 'error',
      steps: 1,
      errorCode: 'AUTH',
      error: 'scripted: 401 invalid x-api-key',
    })
    // A failed turn is the host's to handle, not a warning of the plugin system.
    harness.assertClean()
  })

  it("a route with no adapter: the turn fails with the runtime's message instead of ending silently", async () => {
    const harness = await harnessWith({ content: 'never sent' })
    const agent = await harness.ctx.agentLoop.create('no-adapter', { provider: 'anthropic', model: 'claude' })
    const result: TurnResult = await agent.followup('hi')
    expect(result.reason).toBe('error')
    expect(result.errorCode).toBeDefined()
    expect(result.error).toContain('anthropic')
    expect(agent.lastError?.code).toBe('TURN_FAILED')
    expect(harness.adapter.requests).toHaveLength(0)
  })

  it('queued followups removed by abort() resolve unsent, never hang', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const harness = await harnessWith(async () => {
      await gate
      return { content: 'late' }
    })
    const agent = await harness.ctx.agentLoop.create('aborted', { ...ROUTE })
    const running = agent.followup('one')
    const queued = agent.followup('two')
    while (harness.adapter.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 1))
    const reason = new Error('the user pressed escape')
    expect(agent.abort(reason).map((message) => message.content)).toEqual([[{ type: 'text', text: 'two' }]])
    release()
    expect(await queued).toEqual({
      reason: 'unsent',
      steps: 0,
      errorCode: 'ABORTED',
      error: 'removed from the queue by abort() before its turn started',
      cause: reason,
    })
    expect(await running).toMatchObject({ turn: 1, reason: 'aborted' })
    expect(agent.lastError).toBeUndefined()
    harness.assertClean()
  })

  it('messages the log refused resolve unsent with LOG_FAILED, the same ones lastError hands back', async () => {
    const harness = await harnessWith({ content: 'never' })
    const agent = await harness.ctx.agentLoop.create('refused', { ...ROUTE })
    agent.session.addValidator((candidate) => {
      if (candidate.type === 'turn/start') throw new Error('test validator: turn/start refused')
    })
    const first = agent.followup('one')
    const second = agent.followup('two')
    const results = await Promise.all([first, second])
    expect(results.map((result) => [result.reason, result.errorCode])).toEqual([
      ['unsent', 'LOG_FAILED'],
      ['unsent', 'LOG_FAILED'],
    ])
    // Each message was refused on its own turn/start: each failure hands back the one message it held.
    expect(results[1]?.error).toBe(agent.lastError?.message)
    expect(agent.lastError?.unsent.map((message) => message.content)).toEqual([[{ type: 'text', text: 'two' }]])
    expect(harness.warnings).toEqual([results[0]?.error, results[1]?.error])
  })
})
