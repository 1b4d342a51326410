import { Context } from '@cordisjs/core'
import { pinMessage } from '@warmfold/compaction'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions } from '@warmfold/llm'
import { createUserMessage, textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { assertNoSilentRewrite, fillerText, mountWarmfoldHost, PrefixCacheService } from '../src/index.ts'

const contexts: Context[] = []
afterEach(async () => {
  for (const ctx of contexts.splice(0)) await ctx.stop()
})

/**
 * A host with pins, kept user messages and a `compaction/after` listener, under the byte-prefix
 * simulator: each user request runs eight read steps (1,200-character results), then answers.
 */
async function pinnedHost() {
  const ctx = new Context()
  contexts.push(ctx)
  await ctx.start()
  mountWarmfoldHost(ctx, { engineConfig: { keepUserMessages: { maxTokens: 2000 } } })
  ctx.plugin(PrefixCacheService, {})
  let step = 0
  const adapter = new ScriptedAdapter({
    models: {
      coder: {
        contextWindow: 8000,
        defaultMaxTokens: 500,
        reasoning: { efforts: ['low', 'high'], defaultEffort: 'high' },
      },
    },
    responses: (request: GenerateOptions, index: number) => {
      // Each summary differs, as real ones do: equal checkpoints would share a prefix by chance.
      if (request.purpose === 'compaction')
        return { content: `Goal: refactor the modules. Checkpoint ${index}. Next: the module after it.` }
      return step++ >= 8
        ? { content: `Done. ${fillerText(index, 40)}` }
        : {
            content: [
              textBlock(`Reading. ${fillerText(index, 60)}`),
              toolCallBlock(`call-${index}`, 'read_file', `{"path":"src/${index}.ts"}`),
            ],
          }
    },
  })
  ctx.llm.registerAdapter('sim', adapter)
  let reads = 0
  ctx.tools.register({
    name: 'read_file',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    execute: () => fillerText(1000 + reads++, 1200),
  })
  ctx.on('compaction/after', (context) => context.append('AGENTS.md, re-read: run the tests before every commit.'))
  const agent = await ctx.agentLoop.create('pinned', {
    provider: 'sim',
    model: 'coder',
    reasoningEffort: 'high',
    system: 'You are a coding agent.',
  })
  const request = (text: string | ReturnType<typeof createUserMessage>) => {
    step = 0
    agent.followup(text)
    return agent.whenIdle()
  }
  return { ctx, agent, request }
}

describe('what survives a fold, under the prefix-cache simulator', () => {
  it('breaks the prefix only at logged folds (C1); after each fold system and tools stay cached and the checkpoint, pins and tail are one new suffix', async () => {
    const { ctx, agent, request } = await pinnedHost()
    const sent: GenerateOptions[] = []
    ctx.on('llm/stream', (options) => void sent.push(options))
    const rules = createUserMessage(`Project rules: never edit generated files. ${fillerText(3, 600)}`)
    await request(rules)
    pinMessage(agent.session, rules)
    const folds = () =>
      agent.session.events.filter(
        (event) => event.type === 'compaction/summary',
      ) as SessionEvent<'compaction/summary'>[]
    for (let turn = 1; folds().length < 3; turn++) {
      if (turn > 20) throw new Error('fewer than 3 folds after 20 requests')
      await request(`Request ${turn}: refactor module ${turn}.`)
    }
    const observations = ctx.prefixCache.observations
    assertNoSilentRewrite(observations)

    const conversation = observations.filter((observation) => observation.purpose === 'conversation')
    const broken = conversation.slice(1).filter((observation) => !observation.extendsPrevious)
    // Every break is a fold (no pruner, no header change), each explained by its summary event.
    expect(broken).toHaveLength(folds().length)
    for (const observation of broken) {
      expect(observation.rewritesSince.map((rewrite) => rewrite.type)).toEqual(['compaction/summary'])
      // The first differing byte is in the checkpoint, message 0: tools and system were read from the cache.
      expect(observation.divergence).toMatchObject({ part: 'message', index: 0 })
      expect(observation.cachedTokens).toBeGreaterThan(0)
      // The request after it extends it: checkpoint, pins, kept messages, tail and the hook's
      // message were prefilled once, as one suffix.
      const next = conversation[conversation.indexOf(observation) + 1]
      if (next) {
        expect(next.extendsPrevious).toBe(true)
        expect(next.cachedTokens).toBeGreaterThanOrEqual(observation.promptTokens - 1)
      }
    }
    // Summary calls stay warm with pins on the surface: the first new byte is the trailing instruction.
    const summaries = observations.filter((observation) => observation.purpose === 'compaction')
    const summaryRequests = sent.filter((options) => options.purpose === 'compaction')
    expect(summaries).toHaveLength(folds().length)
    summaries.forEach((summary, index) => {
      const messages = summaryRequests[index]!.messages
      expect(summary.divergence).toMatchObject({ part: 'message', index: messages.length - 1, blockIndex: 0 })
      expect(messages.at(-1)!.content).toEqual([{ type: 'text', text: COMPACTION_INSTRUCTION }])
    })
    const rulesSeq = agent.session.events.find(
      (event) => event.type === 'user/message' && event.data.message.id === rules.id,
    )!.seq
    for (const commit of folds()) expect(commit.data.carriedSeqs?.[0]).toBe(rulesSeq)
  })
})
