import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { LlmRuntime, promptCacheKeyFor } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import { openaiStream, openaiUsage } from '../../../../../llm/llm-openai-compatible/test/provider-streams.ts'

const MODEL = 'gpt-5.6'
const contexts: Array<TestContext & { server: RecordingServer }> = []
afterEach(async () => {
  for (const context of contexts.splice(0)) {
    await context.dispose()
    await context.server.close()
  }
})

describe('agent.fork over HTTP (OpenAI-compatible chat completions)', { timeout: 30_000 }, () => {
  it("the fork's first body is the parent's last body plus one message: every other key equal, prompt_cache_key included", async () => {
    const server = await RecordingServer.start((request, index) => {
      const usage = openaiUsage(Math.ceil(request.body.length / 4), 0, 20, 0, 0)
      if (index < 2)
        return {
          sse: openaiStream(
            MODEL,
            {
              text: `Reading file ${index}.`,
              toolCalls: [{ id: `call_${index}`, name: 'read', arguments: `{"path": "src/file-${index}.ts"}` }],
            },
            usage,
          ),
        }
      return { sse: openaiStream(MODEL, { text: 'All done.' }, usage) }
    })
    const context = Object.assign(await createTestContext(), { server })
    contexts.push(context)
    const { ctx } = context
    ctx.plugin(LlmRuntime)
    ctx.plugin(SessionStore, {})
    ctx.plugin(ToolRegistry)
    ctx.plugin(AgentLoop)
    ctx.plugin(OpenAICompatibleAdapter, {
      provider: 'openai',
      baseURL: server.baseURL,
      apiKey: 'sk-test',
      dialect: 'openai',
      models: {
        [MODEL]: { contextWindow: 64000, defaultMaxTokens: 500, efforts: ['low', 'high'], promptCacheRetention: '24h' },
      },
      retryBaseMs: 1,
    })
    ctx.tools.register({
      name: 'read',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      execute: () => 'file text '.repeat(100),
    })
    ctx.tools.register({
      name: 'write',
      description: 'Write a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      execute: () => 'ok',
    })
    const agent = await ctx.agentLoop.create('parent', {
      provider: 'openai',
      model: MODEL,
      system: 'You are a coding agent.',
      reasoningEffort: 'high',
      temperature: 0.3,
      stop: ['<halt>'],
      maxTokens: 400,
    })
    await agent.followup('Refactor the project.')
    const result = await agent.fork({ task: 'List every file you read.', tools: ['read'] })
    expect(result).toMatchObject({ reason: 'finished', answer: 'All done.' })

    const bodies = server.requests.map((request) => JSON.parse(request.body) as Record<string, any>)
    const { messages: parentMessages, ...parentRest } = bodies.at(-2)!
    const { messages: forkMessages, ...forkRest } = bodies.at(-1)!
    // Model, tools in order (both, though the fork may call only read), effort, temperature,
    // stop, max tokens, stream options, the retention and the parent's cache key.
    expect(forkRest).toEqual(parentRest)
    expect(forkRest).toMatchObject({
      prompt_cache_key: promptCacheKeyFor('parent'),
      reasoning_effort: 'high',
      temperature: 0.3,
      stop: ['<halt>'],
    })
    expect(forkRest.tools.map((tool: any) => tool.function.name)).toEqual(['read', 'write'])
    expect(forkMessages).toHaveLength(parentMessages.length + 1)
    expect(forkMessages.slice(0, -1)).toEqual(parentMessages)
    expect(forkMessages.at(-1)).toEqual({ role: 'user', content: 'List every file you read.' })
  })
})
