import { LlmRuntime } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { TurnResult } from '../src/index.ts'
import { AgentError, AgentLoop, ToolRegistry } from '../src/index.ts'
import { MODEL, ROUTE } from './loop-fixture.ts'

const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

/** Polls (yielding to timers and I/O) until `condition` holds; fails naming `what` after `limit` polls. */
async function until(condition: () => boolean, what: string, limit = 5000): Promise<void> {
  for (let poll = 0; !condition(); poll++) {
    if (poll >= limit) throw new Error(`until: ${what} did not happen after ${limit} polls`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** A loop in a plugin scope of its own (the test unloads it alone) over a model that never answers. */
async function stalledLoop() {
  const context = await createTestContext()
  contexts.push(context)
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(ToolRegistry)
  const loop = ctx.plugin(AgentLoop)
  const adapter = new ScriptedAdapter({ models: { 'scripted-model': MODEL }, responses: () => new Promise(() => {}) })
  ctx.llm.registerAdapter('scripted', adapter)
  const agent = await ctx.agentLoop.create('unload', { ...ROUTE })
  return { context, loop, adapter, agent }
}

describe('unloading the agent loop', () => {
  it('aborts a running turn: its request is aborted, it ends aborted and logs that while the store still holds the session', async () => {
    const { context, loop, adapter, agent } = await stalledLoop()
    let result: TurnResult | undefined
    void agent.followup('never answered').then((settled) => (result = settled))
    await until(() => adapter.requests.length === 1, 'the request going out')
    const signal = adapter.requests[0]!.signal as AbortSignal
    expect(signal.aborted).toBe(false)
    loop.dispose()
    await until(() => result !== undefined, 'the turn ending after the loop was unloaded')
    expect(result).toMatchObject({ turn: 1, reason: 'aborted', steps: 1 })
    expect(signal.aborted).toBe(true)
    expect(AgentError.isInstance(signal.reason) && signal.reason.code).toBe('CLOSED')
    expect(String(signal.reason)).toContain('agent for session unload: the agent loop was unloaded')
    expect(agent.session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 1, reason: 'aborted' } })
    expect(agent.status).toBe('idle')
    context.assertClean()
  })

  it('aborts a running maintenance task with an AgentError CLOSED', async () => {
    const { context, loop, agent } = await stalledLoop()
    let seen: AbortSignal | undefined
    const task = agent.runMaintenance(
      (signal) =>
        new Promise<string>((resolve) => {
          seen = signal
          signal.addEventListener('abort', () => resolve('stopped'))
        }),
    )
    expect(agent.status).toBe('maintenance')
    let outcome: string | undefined
    void task.then((value) => (outcome = value))
    loop.dispose()
    await until(() => outcome !== undefined, 'the maintenance task ending after the loop was unloaded')
    expect(outcome).toBe('stopped')
    expect(AgentError.isInstance(seen?.reason) && seen.reason.code).toBe('CLOSED')
    expect(agent.status).toBe('idle')
    context.assertClean()
  })

  it('a turn or task that ended before the unload is left alone (its signal is not aborted afterwards)', async () => {
    const { context, loop, agent } = await stalledLoop()
    let seen: AbortSignal | undefined
    await agent.runMaintenance(async (signal) => void (seen = signal))
    loop.dispose()
    expect(seen?.aborted).toBe(false)
    context.assertClean()
  })
})
