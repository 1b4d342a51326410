import type { StreamChunk } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { AgentError, DEFAULT_MAX_STEP_RETRIES } from '../src/index.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { callTool, mountLoop, ROUTE, strictlyExtends } from './loop-fixture.ts'

const harnesses: LoopHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harnessWith(responses: Parameters<typeof mountLoop>[0]): Promise<LoopHarness> {
  const harness = await mountLoop(responses)
  harnesses.push(harness)
  harness.ctx.tools.register({ name: 'read', description: '', parameters: { type: 'object' }, execute: () => 'file' })
  return harness
}

function turnEnds(harness: LoopHarness, sessionId: string) {
  return harness.ctx.sessions
    .open(sessionId)
    .then((session) => session.events.filter((event) => event.type === 'turn/end').map((event) => event.data))
}

describe('turn control', () => {
  it('ends the turn at maxSteps with a clear reason', async () => {
    const harness = await harnessWith((_request, index) => callTool(`c${index}`, 'read', '{}'))
    const agent = await harness.ctx.agentLoop.create('max-steps', { ...ROUTE, maxSteps: 3 })
    agent.followup('loop forever')
    await agent.whenIdle()
    expect(harness.adapter.requests).toHaveLength(3)
    expect(await turnEnds(harness, 'max-steps')).toEqual([
      { turn: 1, reason: 'max-steps', steps: 3, error: 'the turn reached maxSteps (3) without a final answer' },
    ])
    harness.assertClean()
  })

  it('aborts mid-stream: partial output is log-only and the next request extends the last complete one', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    async function* slow(): AsyncGenerator<StreamChunk> {
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, delta: 'half an ans' }
      await gate
      yield { type: 'text-delta', index: 0, delta: 'wer' }
      yield { type: 'finish', reason: 'stop' }
    }
    const harness = await harnessWith((_request, index) =>
      index === 0 ? { content: 'first answer' } : index === 1 ? { chunks: slow() } : { content: 'after abort' },
    )
    const agent = await harness.ctx.agentLoop.create('abort', { ...ROUTE })
    agent.followup('one')
    await agent.whenIdle()
    agent.followup('two')
    await new Promise((resolve) => setTimeout(resolve, 0))
    while (harness.adapter.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 1))
    agent.abort()
    release()
    await agent.whenIdle()
    const events = agent.session.events
    const partial = events.find((event) => event.type === 'assistant/partial')
    expect(partial?.data).toMatchObject({
      turn: 2,
      step: 1,
      reason: 'aborted',
      content: [{ type: 'text', text: 'half an ans' }],
    })
    expect(partial?.surface).toBeUndefined()
    expect(
      events.filter((event) => event.type === 'turn/end').map((event) => (event.data as { reason: string }).reason),
    ).toEqual(['stop', 'aborted'])
    agent.followup('three')
    await agent.whenIdle()
    const [first, aborted, third] = harness.requests
    expect(strictlyExtends(first!, aborted!)).toBe(true)
    expect(strictlyExtends(aborted!, third!)).toBe(true)
    expect(
      third!.messages.some((message) =>
        message.content.some((block) => block.type === 'text' && block.text.includes('half an ans')),
      ),
    ).toBe(false)
    harness.assertClean()
  })

  it('retries once when an agent/request-error handler asks, rebuilding the request', async () => {
    const overflow = new LlmError('CONTEXT_WINDOW_EXCEEDED', 'prompt is too long')
    const harness = await harnessWith([{ error: overflow }, { content: 'fits now' }])
    const seen: string[] = []
    let preSteps = 0
    harness.ctx.on('agent/pre-step', () => void preSteps++)
    harness.ctx.on('agent/request-error', (context) => {
      seen.push(`${(context.error as LlmError).code}:${context.retries}`)
      return { retry: true }
    })
    const agent = await harness.ctx.agentLoop.create('retry', { ...ROUTE })
    agent.followup('hi')
    await agent.whenIdle()
    expect(seen).toEqual(['CONTEXT_WINDOW_EXCEEDED:0'])
    expect(preSteps).toBe(2)
    expect(harness.adapter.requests).toHaveLength(2)
    expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: 'stop', steps: 1 })
    harness.assertClean()
  })

  it('retries a step at most maxStepRetries times, and unhandled errors end the turn with the LlmError code', async () => {
    const overflow = { error: new LlmError('CONTEXT_WINDOW_EXCEEDED', 'prompt is too long') }
    const harness = await harnessWith([overflow, overflow, { error: new LlmError('RATE_LIMITED', 'slow down') }])
    harness.ctx.on('agent/request-error', (context) =>
      (context.error as LlmError).code === 'CONTEXT_WINDOW_EXCEEDED' ? { retry: true } : undefined,
    )
    const agent = await harness.ctx.agentLoop.create('no-loop', { ...ROUTE, maxStepRetries: 1 })
    agent.followup('one')
    await agent.whenIdle()
    agent.followup('two')
    await agent.whenIdle()
    expect(harness.adapter.requests).toHaveLength(3)
    expect(await turnEnds(harness, 'no-loop')).toEqual([
      { turn: 1, reason: 'error', steps: 1, errorCode: 'CONTEXT_WINDOW_EXCEEDED', error: 'prompt is too long' },
      { turn: 2, reason: 'error', steps: 1, errorCode: 'RATE_LIMITED', error: 'slow down' },
    ])
    harness.assertClean()
  })

  it('grants as many retries as listeners ask for, up to the default bound of 8 per step', async () => {
    const harness = await harnessWith({ error: new LlmError('CONTEXT_WINDOW_EXCEEDED', 'prompt is too long') })
    const granted: number[] = []
    harness.ctx.on('agent/request-error', (context) => {
      granted.push(context.retries)
      return { retry: true }
    })
    const agent = await harness.ctx.agentLoop.create('bounded-retries', { ...ROUTE })
    agent.followup('one')
    await agent.whenIdle()
    expect(harness.adapter.requests).toHaveLength(1 + DEFAULT_MAX_STEP_RETRIES)
    expect(granted).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    expect(agent.session.events.at(-1)?.data).toMatchObject({
      reason: 'error',
      steps: 1,
      errorCode: 'CONTEXT_WINDOW_EXCEEDED',
    })
    await expect(harness.ctx.agentLoop.create('bad', { ...ROUTE, maxStepRetries: -1 })).rejects.toThrow(
      'agent option maxStepRetries must be an integer from 0 to 2147483647, got -1',
    )
    harness.assertClean()
  })

  it('runs maintenance only while idle and holds followups until it finishes', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const harness = await harnessWith({ content: 'ok' })
    const agent = await harness.ctx.agentLoop.create('maintenance', { ...ROUTE })
    const order: string[] = []
    const task = agent.runMaintenance(async () => {
      await gate
      order.push('maintenance')
      return 42
    })
    await expect(agent.runMaintenance(async () => 0)).rejects.toSatisfy(
      (error: unknown) => AgentError.isInstance(error) && error.code === 'BUSY',
    )
    agent.followup('queued during maintenance')
    expect(harness.adapter.requests).toHaveLength(0)
    release()
    expect(await task).toBe(42)
    await agent.whenIdle()
    order.push(`requests:${harness.adapter.requests.length}`)
    expect(order).toEqual(['maintenance', 'requests:1'])

    const slow = await harnessWith(() => new Promise(() => {}))
    const busy = await slow.ctx.agentLoop.create('busy', { ...ROUTE })
    busy.followup('never answered')
    await expect(busy.runMaintenance(async () => 1)).rejects.toThrow(
      /is running; maintenance runs only while it is idle/,
    )
    busy.abort()
    await busy.whenIdle()
    expect(busy.session.events.at(-1)?.data).toMatchObject({ reason: 'aborted' })
    harness.assertClean()
  })

  it('is idle as soon as a maintenance task with nothing queued ends: the next caller starts its own maintenance at once, and whenIdle() has resolved', async () => {
    const harness = await harnessWith({ content: 'ok' })
    const agent = await harness.ctx.agentLoop.create('back-to-back', { ...ROUTE })
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const first = agent.runMaintenance(() => gate.then(() => 1))
    const idle = agent.whenIdle().then(() => agent.status)
    release()
    expect(await first).toBe(1)
    expect(await agent.runMaintenance(async () => 3)).toBe(3)
    expect(await idle).toBe('idle')
    harness.assertClean()
  })

  it('rejects bad agent options naming the option', async () => {
    const harness = await harnessWith({ content: 'ok' })
    await expect(harness.ctx.agentLoop.create('bad', { ...ROUTE, maxSteps: 0 })).rejects.toThrow(
      'agent option maxSteps must be an integer from 1 to 2147483647, got 0',
    )
    await expect(harness.ctx.agentLoop.create('bad', { ...ROUTE, model: '' })).rejects.toThrow(
      'agent option model must be a non-empty string',
    )
    harness.assertClean()
  })
})
