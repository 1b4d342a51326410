import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { BasicCompactionEngine } from '@warmfold/compaction-basic'
import { LlmRuntime, reasoningBlock, textBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import { TokenMeter } from '@warmfold/token-meter'

export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(BasicCompactionEngine, {
    maxTokens: 1024,
    // Larger caps on the same (cached) prompt first; then, for this model only, one cold call at 'high'.
    modelPolicies: [
      {
        provider: 'deepseek',
        model: 'deepseek-v4-pro',
        summaryBudget: { retries: 2, growth: 2, fallbackEffort: 'high' },
      },
    ],
  })

  // A scripted reasoning model: at effort 'max' its summary needs about 3,000 tokens of reasoning first.
  ctx.llm.registerAdapter(
    'deepseek',
    new ScriptedAdapter({
      models: {
        'deepseek-v4-pro': {
          contextWindow: 16000,
          defaultMaxTokens: 1024,
          efforts: ['off', 'high', 'max'],
          defaultEffort: 'high',
        },
      },
      responses: (request) => {
        if (request.purpose !== 'compaction')
          return { content: `Noted. ${'The loader reads the config, then the plugins. '.repeat(12)}` }
        if (request.reasoningEffort === 'max' && request.maxTokens! < 3000)
          return { content: [reasoningBlock('Going over every file again...')], finishReason: 'max-tokens' }
        return {
          content: [
            reasoningBlock('Done.'),
            textBlock('Goal: explain the loader. Read: src/loader.ts. Next: the plugin order.'),
          ],
        }
      },
    }),
  )

  const agent = await ctx.agentLoop.create('s1', {
    provider: 'deepseek',
    model: 'deepseek-v4-pro',
    reasoningEffort: 'max',
  })
  for (const question of ['How does the loader start?', 'And the plugins?', 'In which order?']) {
    agent.followup(question)
    await agent.whenIdle()
  }
  const result = await ctx.compaction.compactNow(agent)
  // Every summary call, with its cap and usage: 1024 and 2048 ended in reasoning, 4096 wrote the summary.
  const summary = agent.session.events.find(
    (event) => event.type === 'compaction/summary' && event.data.compactionId === result?.compactionId,
  )
  await ctx.stop()
  return summary?.type === 'compaction/summary' ? summary.data.attempts : undefined
}
