import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { LlmRuntime, textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'

/** Runs one turn in which the model reads a file of `workspace`; the session is logged under `directory`. */
export async function main(workspace = process.cwd(), directory = '.warmfold/sessions') {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, { store: 'file', directory })
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)

  // A host mounts an adapter plugin that registers 'deepseek' (e.g. @warmfold/llm-openai-compatible).
  // Here a scripted model calls the tool once, then answers.
  ctx.llm.registerAdapter(
    'deepseek',
    new ScriptedAdapter({
      models: {
        'deepseek-v4-flash': {
          contextWindow: 131072,
          defaultMaxTokens: 8192,
          efforts: ['off', 'high', 'max'],
          defaultEffort: 'high',
        },
      },
      responses: [
        {
          content: [textBlock('Let me read the test.'), toolCallBlock('call-1', 'read', '{"path":"test/add.test.ts"}')],
        },
        { content: 'The test expects add(2, 2) to be 4.' },
      ],
    }),
  )

  ctx.tools.register({
    name: 'read',
    description: 'Read a file of the workspace',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    // `args` is the model's argument JSON, parsed; a thrown error becomes an error tool result.
    execute: async (args, { signal }) => {
      const { path } = args as { path: string }
      return readFile(join(workspace, path), { encoding: 'utf8', signal })
    },
  })

  const agent = await ctx.agentLoop.create('session-1', {
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    reasoningEffort: 'max',
    system: 'You are a coding agent.',
  })
  // Resolves when the turn has ended: { turn: 1, reason: 'stop', steps: 2 } here; on a failure
  // (a 401, a missing adapter) reason 'error' with errorCode, error and cause, also on agent.lastError.
  const result = await agent.followup('Fix the failing test.')

  const types = agent.session.events.map((event) => event.type)
  // ['turn/start', 'user/message', 'request/header', 'assistant/message', 'tool/result', 'assistant/message', 'turn/end']
  await ctx.stop()
  return { result, types, messages: agent.session.deriveMessages(), lastError: agent.lastError }
}
