import type { GenerateOptions } from '@warmfold/llm'
import { createUserMessage, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { createTestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { mountWarmfoldHost } from '../src/index.ts'
import { SLACK, useLlamaCacheServer, userMessageTokens } from './real-cache-fixture.ts'

// A fork's first request against a real llama.cpp KV cache: the requests the loop sent (the
// scripted model supplies the content) are replayed in order through the probe, which reports
// how many prompt tokens the engine reused.

const { probe } = useLlamaCacheServer()
const TASK = 'Find every caller of add and list the files.'

describe('a real KV cache (llama.cpp): a fork reads its parent', () => {
  it("the fork's first request evaluates only its task; a cold subagent with its own system prompt reuses almost nothing", async () => {
    const context = await createTestContext()
    const requests: GenerateOptions[] = []
    try {
      const { ctx } = context
      mountWarmfoldHost(ctx, { engineConfig: { auto: false } })
      ctx.on('llm/stream', (request) => void requests.push(request))
      ctx.tools.register({
        name: 'read',
        description: 'Read a file',
        parameters: { type: 'object', properties: { path: { type: 'string' } } },
        execute: () => `export function add(a, b) { return a + b }\n${'// line of the file\n'.repeat(60)}`,
      })
      ctx.llm.registerAdapter(
        'sim',
        new ScriptedAdapter({
          models: { m: { contextWindow: 32000, defaultMaxTokens: 1000 } },
          responses: [
            { content: [toolCallBlock('call-1', 'read', '{"path":"src/add.ts"}')] },
            { content: 'I read it.' },
            { content: 'src/main.ts calls add.' },
          ],
        }),
      )
      const agent = await ctx.agentLoop.create('parent', {
        provider: 'sim',
        model: 'm',
        system: 'You are a coding agent. Follow the repository conventions.',
      })
      await agent.followup('Read src/add.ts.')
      expect((await agent.fork({ task: TASK })).reason).toBe('finished')
    } finally {
      await context.dispose()
    }
    expect(requests.map((request) => request.sessionId)).toEqual(['parent', 'parent', 'parent.fork-1'])
    const taskTokens = await userMessageTokens(probe(), TASK)
    const real = probe()
    const records = []
    for (const request of requests) records.push(await real.probe(request))
    const [, parentLast, forkFirst] = records
    expect(parentLast!.promptTokens).toBeGreaterThan(300)
    expect(forkFirst!.cachedTokens).toBeGreaterThanOrEqual(parentLast!.promptTokens - SLACK)
    expect(forkFirst!.uncachedTokens).toBeLessThanOrEqual(taskTokens + SLACK)
    // Negative control: the same task sent cold, with a subagent's own system prompt and no history.
    const cold = await real.probe({
      provider: 'sim',
      model: 'm',
      system: 'You are a search subagent.',
      messages: [createUserMessage(TASK)],
      purpose: 'conversation',
    })
    expect(cold.cachedTokens).toBeLessThan(64)
  }, 120_000)
})
