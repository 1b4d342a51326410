import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CompactionInvariants } from '@warmfold/compaction'
import { LlmRuntime } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import { MyEngine } from './my-engine.ts' // any engine, e.g. BasicCompactionEngine from @warmfold/compaction-basic

export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, { store: 'memory' })
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(CompactionInvariants) // optional: rejects appends that break the compaction rules
  ctx.plugin(MyEngine, { maxCharacters: 400_000, summaryMaxTokens: 4096 })

  // A scripted model stands in for a real adapter: two answers, then the summary.
  const adapter = new ScriptedAdapter({
    models: {
      'deepseek-v4-flash': {
        contextWindow: 131072,
        defaultMaxTokens: 8192,
        efforts: ['off', 'high', 'max'],
        defaultEffort: 'high',
      },
    },
    responses: [
      { content: '`add` subtracts; I changed it to add.' },
      { content: 'Yes, all 12 tests pass.' },
      { content: 'Goal: fix add. Done: add now adds; tests pass.' },
    ],
  })
  ctx.llm.registerAdapter('deepseek', adapter)

  const agent = await ctx.agentLoop.create('s1', {
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    reasoningEffort: 'max',
  })
  agent.followup('Fix the failing test.')
  agent.followup('Do the tests pass now?')
  await agent.whenIdle()

  // Later, e.g. from a /compact command, while the agent is idle:
  const result = await ctx.compaction.compactNow(agent)
  // result: { compactionId, startSeq, summarySeq, checkpointSeq, endSeq, summary, shadowedRange, shadowedSeqs, shadowedTokenCount }
  const messages = agent.session.deriveMessages() // the checkpoint, then the newest answer
  const summaryRequest = adapter.requests.at(-1) // purpose 'compaction', reasoningEffort 'max': the conversation's
  await ctx.stop()
  return { result, messages, summaryRequest }
}
