import { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import type { GenerateOptions } from '@warmfold/llm'
import { LlmRuntime, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'

/** A host that offers forking as a tool: the model hands a search to a subagent that reads its cache. */
export async function main() {
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore)
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)

  // A scripted model: the parent delegates, the fork reads a file and answers, the parent answers.
  ctx.llm.registerAdapter(
    'deepseek',
    new ScriptedAdapter({
      models: { 'deepseek-v4-flash': { contextWindow: 131072, defaultMaxTokens: 8192 } },
      responses: [
        { content: [toolCallBlock('call-1', 'delegate', '{"task":"Which file defines add?"}')] },
        { content: [toolCallBlock('call-2', 'read', '{"path":"src/add.ts"}')] },
        { content: 'src/add.ts defines add.' },
        { content: 'The subagent found it: src/add.ts.' },
      ],
    }),
  )
  const requests: GenerateOptions[] = []
  ctx.on('llm/stream', (request) => void requests.push(request))

  let agent: Agent | undefined
  ctx.tools.register({
    name: 'read',
    description: 'Read a file of the workspace',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: () => 'export const add = (a: number, b: number) => a + b',
  })
  ctx.tools.register({
    name: 'delegate',
    description: 'Hand a task to a subagent that sees this conversation; returns its answer',
    parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
    // The fork's first request is this agent's last request plus the task, so it reads the
    // parent's cache. It may read but not delegate again (the tool stays in its request).
    execute: async (args) => {
      const fork = await agent!.fork({ task: (args as { task: string }).task, tools: ['read'] })
      if (fork.reason === 'failed') throw new Error(fork.error)
      return fork.answer!
    },
  })

  agent = await ctx.agentLoop.create('session-1', {
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    system: 'You are a coding agent.',
  })
  const result = await agent.followup('Where is add defined?')
  // The parent's log: ... 'agent/fork-start', 'agent/fork-end' { reason: 'finished', answer }, 'tool/result' ...
  const types = agent.session.events.map((event) => event.type)
  await ctx.stop()
  return { result, types, requests, messages: agent.session.deriveMessages() }
}
