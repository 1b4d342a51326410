import { LlmRuntime, PluginLoadError } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { AgentLoop, MissingServiceError, ToolRegistry } from '../src/index.ts'
import { MODEL, ROUTE } from './loop-fixture.ts'

const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

type Mountable = 'llm' | 'sessions' | 'tools'

/** A Context with the loop and every service except `missing`. */
async function hostWithout(missing: Mountable | undefined): Promise<TestContext> {
  const context = await createTestContext()
  contexts.push(context)
  const { ctx } = context
  if (missing !== 'llm') {
    ctx.plugin(LlmRuntime)
    ctx.llm.registerAdapter(
      'scripted',
      new ScriptedAdapter({ models: { 'scripted-model': MODEL }, responses: () => ({ content: 'ok' }) }),
    )
  }
  if (missing !== 'sessions') ctx.plugin(SessionStore, {})
  if (missing !== 'tools') ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  return context
}

describe('a service the loop needs is not mounted', () => {
  it.each([
    ['sessions', '@warmfold/session', 'SessionStore'],
    ['llm', '@warmfold/llm', 'LlmRuntime'],
    ['tools', '@warmfold/agent-loop', 'ToolRegistry'],
  ] as const)(
    'without ctx.%s the loop still mounts, and create() names %s (%s)',
    async (service, packageName, plugin) => {
      const { ctx, assertClean } = await hostWithout(service)
      // cordis would keep a plugin whose required inject is missing pending without a word.
      expect(ctx.get('agentLoop')).toBeDefined()
      const error = await ctx.agentLoop.create('s1', { ...ROUTE }).catch((caught: unknown) => caught)
      expect(MissingServiceError.isInstance(error)).toBe(true)
      expect(error).toMatchObject({ code: 'SERVICE_MISSING', service, packageName, plugin, requiredBy: 'AgentLoop' })
      expect((error as Error).message).toBe(
        `AgentLoop needs ctx.${service}, which is not mounted in its Context: mount ${packageName} (ctx.plugin(${plugin})) in the same Context`,
      )
      assertClean()
    },
  )

  it('a session store whose config was refused: create() names the config error, not "mount @warmfold/session"', async () => {
    const context = await createTestContext()
    contexts.push(context)
    const { ctx } = context
    ctx.plugin(LlmRuntime)
    ctx.plugin(SessionStore, { store: 'disk' } as never)
    ctx.plugin(ToolRegistry)
    ctx.plugin(AgentLoop)
    const error = await ctx.agentLoop.create('s1', { ...ROUTE }).catch((caught: unknown) => caught)
    expect(MissingServiceError.isInstance(error)).toBe(false)
    expect(PluginLoadError.isInstance(error)).toBe(true)
    const message = (error as Error).message
    expect(message).toContain('@warmfold/session (SessionStore) failed to load: SessionStore config:')
    expect(message).toContain('disk')
    expect(message).not.toContain('mount @warmfold/session')
    // The refused config is the one problem the context reported.
    expect(context.errors).toHaveLength(1)
  })

  it('a runtime unloaded after create ends the next turn with SERVICE_MISSING naming its package', async () => {
    const context = await createTestContext()
    contexts.push(context)
    const { ctx, assertClean } = context
    const runtime = ctx.plugin(LlmRuntime)
    ctx.llm.registerAdapter(
      'scripted',
      new ScriptedAdapter({ models: { 'scripted-model': MODEL }, responses: () => ({ content: 'ok' }) }),
    )
    ctx.plugin(SessionStore, {})
    ctx.plugin(ToolRegistry)
    ctx.plugin(AgentLoop)
    const agent = await ctx.agentLoop.create('unloaded', { ...ROUTE })
    agent.followup('first')
    await agent.whenIdle()
    runtime.dispose()
    agent.followup('second')
    await agent.whenIdle()
    const ends = agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)
    expect(ends).toEqual([
      { turn: 1, reason: 'stop', steps: 1 },
      {
        turn: 2,
        reason: 'error',
        steps: 1,
        errorCode: 'SERVICE_MISSING',
        error:
          'AgentLoop needs ctx.llm, which is not mounted in its Context: mount @warmfold/llm (ctx.plugin(LlmRuntime)) in the same Context',
      },
    ])
    expect(agent.lastError).toMatchObject({ code: 'TURN_FAILED', turn: 2, turnErrorCode: 'SERVICE_MISSING' })
    expect(agent.lastError?.message).toContain('mount @warmfold/llm (ctx.plugin(LlmRuntime))')
    assertClean()
  })
})
