import { Context } from '@cordisjs/core'
import { ToolResultPruner } from '@warmfold/compaction-tool-result-pruner'
import { createAssistantMessage, createToolResultMessage, createUserMessage, toolCallBlock } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { TokenMeter } from '@warmfold/token-meter'

/**
 * One pruning decision as a compaction engine makes it. `thresholdTokens` and `regionEnd` come
 * from the engine's policy (see @warmfold/compaction-basic): the request must get below the
 * threshold, and a summary would replay surface positions 0..regionEnd.
 */
export async function main(thresholdTokens = 4000, regionEnd = 2) {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(SessionStore, { store: 'memory' })
  ctx.plugin(TokenMeter, {})
  ctx.plugin(ToolResultPruner, { thresholdChars: 8192, headChars: 4096, tailChars: 1024 })

  // Two oversized tool results (the agent loop logs such a session as it runs).
  const route = { provider: 'deepseek', model: 'deepseek-v4-flash' }
  const session = await ctx.sessions.create('session-1')
  session.append('user/message', { message: createUserMessage('Why does the build fail?') }, 'append')
  session.append(
    'assistant/message',
    { message: createAssistantMessage([toolCallBlock('call-1', 'build', '{}')], route) },
    'append',
  )
  session.append(
    'tool/result',
    { message: createToolResultMessage('call-1', 'warning: unused import\n'.repeat(900)) },
    'append',
  )
  session.append(
    'assistant/message',
    { message: createAssistantMessage([toolCallBlock('call-2', 'test', '{}')], route) },
    'append',
  )
  session.append(
    'tool/result',
    { message: createToolResultMessage('call-2', 'PASS src/add.test.ts\n'.repeat(900)) },
    'append',
  )

  const pruner = ctx.toolResultPruner
  const measuredTokens = ctx.tokenMeter.measure(session).totalTokens

  // 1. Price the pass. Nothing is written; no prompt byte moves.
  const plan = pruner.planSession(session)
  const saving = plan.reduce((sum, entry) => sum + entry.originalTokens - entry.prunedTokens, 0)

  let pass
  if (measuredTokens - saving <= thresholdTokens) {
    // 2a. Pruning alone clears the pressure: no summary follows, prune everywhere.
    pass = { kind: 'prune-only', result: pruner.pruneSession(session) }
  } else {
    // 2b. A summary of positions 0..regionEnd follows: prune only the retained tail, so the
    //     summary call replays the cached prefix byte for byte (rule C4).
    const retained = new Set(session.surface.nodes.slice(regionEnd + 1))
    pass = { kind: 'tail-only', result: pruner.pruneSession(session, retained) }
    // ...summarize positions 0..regionEnd (they did not move: every prune is a 1-for-1 replace)
  }
  const result = { measuredTokens, saving, plan, pass, after: ctx.tokenMeter.measure(session).totalTokens }
  await ctx.stop()
  return result
}
