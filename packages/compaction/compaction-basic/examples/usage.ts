import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { BasicCompactionEngine } from '@warmfold/compaction-basic'
import { ToolResultPruner } from '@warmfold/compaction-tool-result-pruner'
import { LlmRuntime, textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import { TokenMeter } from '@warmfold/token-meter'

export async function main(directory = '.warmfold/sessions') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, { store: 'file', directory })
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(ToolResultPruner, {}) // optional
  ctx.plugin(BasicCompactionEngine, { thresholdRatio: 0.8, retainRatio: 0.16 })

  // A host mounts an adapter plugin for its provider (e.g. @warmfold/llm-openai-compatible).
  // Here a scripted model with an 8,000-token window reads twelve files, then answers.
  let steps = 0
  ctx.llm.registerAdapter(
    'deepseek',
    new ScriptedAdapter({
      models: {
        'deepseek-v4-flash': {
          contextWindow: 8000,
          defaultMaxTokens: 1024,
          efforts: ['off', 'high', 'max'],
          defaultEffort: 'high',
        },
      },
      responses: (request) => {
        if (request.purpose === 'compaction')
          return { content: 'Goal: find why `add` fails. Read the first files; no bug yet.' }
        steps++
        if (steps > 12) return { content: 'Found it: `add` subtracts.' }
        return {
          content: [
            textBlock(`Reading file ${steps}.`),
            toolCallBlock(`call-${steps}`, 'read', JSON.stringify({ path: `src/${steps}.ts` })),
          ],
        }
      },
    }),
  )
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: (args) => `// ${(args as { path: string }).path}\n${'export const value = 1\n'.repeat(120)}`,
  })

  const agent = await ctx.agentLoop.create('s1', {
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    reasoningEffort: 'max',
  })
  agent.followup('Why does the add test fail?') // compaction runs by itself before each step under pressure
  await agent.whenIdle()
  const automatic = agent.session.events.filter((event) => event.type === 'compaction/summary').length

  const manual = await ctx.compaction.compactNow(agent) // manual, while idle
  await ctx.stop()
  return { automatic, manual, lastError: agent.lastError }
}
