import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { pinMessage } from '@warmfold/compaction'
import { BasicCompactionEngine } from '@warmfold/compaction-basic'
import { createUserMessage, LlmRuntime } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import { TokenMeter } from '@warmfold/token-meter'

export async function main(readRules = async () => 'Use pnpm. Never edit generated files.') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(BasicCompactionEngine, { keepUserMessages: { maxTokens: 200 } })
  ctx.llm.registerAdapter(
    'deepseek',
    new ScriptedAdapter({
      models: { 'deepseek-v4-flash': { contextWindow: 16000, defaultMaxTokens: 1024 } },
      responses: (request) => ({
        content:
          request.purpose === 'compaction'
            ? 'Goal: explain the loader.'
            : `Noted. ${'The loader reads the config. '.repeat(20)}`,
      }),
    }),
  )

  const agent = await ctx.agentLoop.create('s1', { provider: 'deepseek', model: 'deepseek-v4-flash' })
  const rules = createUserMessage(`Project rules:\n${await readRules()}`)
  agent.followup(rules)
  await agent.whenIdle()
  pinMessage(agent.session, rules) // by message (its id) or by seq; carried verbatim through every fold
  // Fresh content in the fold's own commit, e.g. the instruction files re-read now.
  ctx.on('compaction/after', async ({ append }) => append(`Rules, re-read:\n${await readRules()}`))
  for (const question of ['How does the loader start?', 'And the plugins?']) {
    agent.followup(question)
    await agent.whenIdle()
  }
  await ctx.compaction.compactNow(agent)
  // After the fold: checkpoint, the pinned rules, the kept questions, the tail, the re-read rules.
  const surface = agent.session
    .deriveMessages()
    .map((message) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''))
  await ctx.stop()
  return surface
}
