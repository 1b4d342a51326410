import { Context } from '@cordisjs/core'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  LlmRuntime,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import { bench, describe } from 'vitest'
import type { Agent } from '../src/index.ts'
import { AgentLoop, ToolRegistry } from '../src/index.ts'

const STEPS_PER_TURN = 10

async function agentWithHistory(events: number): Promise<Agent> {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  // Replies are prebuilt so the scripted model costs next to nothing per step.
  const call = { content: [textBlock('reading'), toolCallBlock('c', 'read', '{"path":"a.ts"}')] }
  const done = { content: 'done' }
  ctx.llm.registerAdapter(
    'scripted',
    new ScriptedAdapter({
      models: { m: { contextWindow: 1_000_000 } },
      responses: (_request, index) => ((index + 1) % (STEPS_PER_TURN + 1) === 0 ? done : call),
    }),
  )
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object' },
    execute: () => 'contents',
  })
  const agent = await ctx.agentLoop.create('bench', { provider: 'scripted', model: 'm' })
  const session = agent.session
  for (let index = 0; session.length < events; index++) {
    session.append('user/message', { message: createUserMessage(`note ${index}`) }, 'append')
    session.append(
      'assistant/message',
      {
        message: createAssistantMessage([toolCallBlock(`h${index}`, 'read', '{}')], {
          provider: 'scripted',
          model: 'm',
        }),
      },
      'append',
    )
    session.append('tool/result', { message: createToolResultMessage(`h${index}`, `result ${index}`) }, 'append')
  }
  return agent
}

for (const events of [1_000, 10_000]) {
  describe(`agent loop with ${events} events of history`, () => {
    let agent: Agent | undefined
    bench(
      `one turn of ${STEPS_PER_TURN} steps (divide by ${STEPS_PER_TURN + 1} requests for per-step overhead)`,
      async () => {
        agent!.followup('go')
        await agent!.whenIdle()
      },
      {
        iterations: 20,
        time: 0,
        setup: async () => {
          agent ??= await agentWithHistory(events)
        },
      },
    )
  })
}
