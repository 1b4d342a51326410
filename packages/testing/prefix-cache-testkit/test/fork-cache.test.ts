import type { Context } from '@cordisjs/core'
import type { Agent } from '@warmfold/agent-loop'
import type { GenerateOptions } from '@warmfold/llm'
import { textOf, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { CacheObservation } from '../src/index.ts'
import { mountWarmfoldHost, PrefixCacheService, tokensOf } from '../src/index.ts'

// Forks read the parent's cache: each fork's first request is the parent's last request plus its
// task, so under the simulator it pays only for the task.

const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) {
    await context.dispose()
    context.assertClean()
  }
})

const SYSTEM = `You are a coding agent. ${'Follow the repository conventions. '.repeat(60)}`
const FILE = `export function add(a: number, b: number) { return a + b }\n${'// a comment line of the file\n'.repeat(200)}`
const TASKS = [
  'Find every caller of add and list the files.',
  'Check whether add is covered by a test.',
  'Look for a subtract function next to add.',
]

/** A host with the simulator on `profile`, a scripted model answering each fork's task, and a parent that read a file. */
async function parentWithHistory(
  profile: string,
  respond?: (request: GenerateOptions, ctx: Context) => Promise<void>,
): Promise<{ ctx: Context; agent: Agent; forkFirsts: () => CacheObservation[] }> {
  const context = await createTestContext()
  contexts.push(context)
  const { ctx } = context
  mountWarmfoldHost(ctx, { engineConfig: { auto: false } })
  ctx.plugin(PrefixCacheService, { profile })
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    execute: () => FILE,
  })
  ctx.llm.registerAdapter(
    'sim',
    new ScriptedAdapter({
      models: { m: { contextWindow: 200000, defaultMaxTokens: 4096 } },
      responses: async (request, index) => {
        if (index === 0) return { content: [toolCallBlock('call-1', 'read', '{"path":"src/add.ts"}')] }
        if (index === 1) return { content: 'I read the file.' }
        await respond?.(request, ctx)
        return { content: `done: ${textOf(request.messages.at(-1)!.content)}` }
      },
    }),
  )
  const agent = await ctx.agentLoop.create('parent', { provider: 'sim', model: 'm', system: SYSTEM })
  await agent.followup('Read src/add.ts.')
  const forkFirsts = () =>
    ctx.prefixCache.observations.filter((observation) => observation.sessionId?.startsWith('parent.fork-'))
  return { ctx, agent, forkFirsts }
}

describe('forks under the prefix-cache simulator', () => {
  for (const profile of ['anthropic', 'bytes']) {
    it(`${profile}: each of three forks' first request pays only its task (≤ task tokens + 50 uncached)`, async () => {
      const { ctx, agent, forkFirsts } = await parentWithHistory(profile)
      const parentLast = ctx.prefixCache.observations.at(-1)!
      expect(parentLast.promptTokens).toBeGreaterThan(2000)
      const results = await Promise.all(TASKS.map((task) => agent.fork({ task })))
      expect(results.map((result) => result.reason)).toEqual(['finished', 'finished', 'finished'])
      const firsts = forkFirsts()
      expect(firsts).toHaveLength(3)
      firsts.forEach((observation, index) => {
        const task = TASKS[index] as string
        expect(observation.uncachedTokens).toBeLessThanOrEqual(tokensOf(task.length) + 50)
        expect(observation.cachedTokens).toBeGreaterThanOrEqual(parentLast.promptTokens - 50)
      })
    })
  }

  it("siblings read the first fork's write once its response has begun; without waiting they prefill it all again", async () => {
    const uncached: Record<string, number[]> = {}
    for (const wait of [true, false]) {
      // Entries live 60 s; a write is readable from the writer's first token (10 s after sending).
      let siblingsSent!: () => void
      const siblings = new Promise<void>((resolve) => (siblingsSent = resolve))
      const { ctx, agent, forkFirsts } = await parentWithHistory('bytes:ttl=60', async (request, ctx) => {
        if (textOf(request.messages.at(-1)!.content) !== TASKS[0]) return
        // Without the wait, the first fork's response begins only after its siblings were sent.
        if (!wait) await siblings
        ctx.prefixCache.cache.advanceClock(10_000)
      })
      ctx.prefixCache.cache.entryDelayMs = () => 10_000
      // The parent's entry has expired: the first fork prefills the whole prefix again.
      ctx.prefixCache.cache.advanceClock(120_000)
      ctx.on('llm/stream', () => {
        if (forkFirsts().length === 3) siblingsSent()
      })
      const results = await Promise.all(TASKS.map((task) => agent.fork({ task, siblingsWaitForFirst: wait })))
      expect(results.every((result) => result.reason === 'finished')).toBe(true)
      uncached[String(wait)] = forkFirsts().map((observation) => observation.uncachedTokens)
    }
    const [first, ...siblings] = uncached.true as number[]
    expect(first).toBeGreaterThan(2000)
    siblings.forEach((tokens, index) =>
      expect(tokens).toBeLessThanOrEqual(tokensOf((TASKS[index + 1] as string).length) + 50),
    )
    // Sent before the first fork's response began, each sibling prefilled the whole prefix.
    for (const tokens of (uncached.false as number[]).slice(1)) expect(tokens).toBeGreaterThan(2000)
  })
})
