import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { LlmRuntime, textOf } from '@warmfold/llm'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import { SessionStore } from '@warmfold/session'

export async function main(baseURL = 'https://api.deepseek.com') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, { store: 'memory' })
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'deepseek',
    baseURL,
    apiKeyEnv: 'DEEPSEEK_API_KEY',
    dialect: 'deepseek',
    models: {
      'deepseek-v4-flash': {
        contextWindow: 131072,
        defaultMaxTokens: 8192,
        efforts: ['off', 'high', 'max'],
        defaultEffort: 'high',
      },
    },
  })

  // The route names the adapter's provider id and one of its models.
  const agent = await ctx.agentLoop.create('s1', {
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    reasoningEffort: 'max',
  })
  agent.followup('Say hi.')
  await agent.whenIdle()
  const reply = agent.session.deriveMessages().at(-1)
  await ctx.stop()
  return { reply: reply && textOf(reply.content), lastError: agent.lastError }
}
