import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { LlmRuntime } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { assertNoSilentRewrite, PrefixCacheService } from '@warmfold/prefix-cache-testkit'
import { SessionStore } from '@warmfold/session'

export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, { store: 'memory' })
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(PrefixCacheService, { profile: 'bytes' }) // or 'blocks:16', 'anthropic'; sees every request ctx.llm sends
  ctx.llm.registerAdapter(
    'anthropic',
    new ScriptedAdapter({
      models: { 'claude-sonnet-4-6': { contextWindow: 200_000, defaultMaxTokens: 32_000 } },
      responses: [{ content: 'Which test fails?' }, { content: 'Then `add` subtracts; fix it.' }],
    }),
  )

  const agent = await ctx.agentLoop.create('s1', {
    provider: 'anthropic',
    model: 'claude-sonnet-4-6',
    system: 'You are a coding agent.',
  })
  agent.followup('The build is red.')
  agent.followup('test/add.test.ts.')
  await agent.whenIdle()

  const totals = ctx.prefixCache.totals() // { requests, promptTokens, cachedTokens, uncachedTokens, hitRatio }
  assertNoSilentRewrite(ctx.prefixCache.observations) // throws when a request rewrote its prefix without a logged reason
  const observations = ctx.prefixCache.observations.map((observation) => ({
    cachedTokens: observation.cachedTokens,
    extendsPrevious: observation.extendsPrevious,
  }))
  await ctx.stop()
  return { totals, observations }
}
