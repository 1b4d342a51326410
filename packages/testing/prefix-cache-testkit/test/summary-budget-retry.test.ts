import type { SummaryAttempt } from '@warmfold/compaction'
import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions } from '@warmfold/llm'
import { reasoningBlock, textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { SessionEvent } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { CacheObservation } from '../src/index.ts'
import { mountWarmfoldHost, PrefixCache, PrefixCacheService } from '../src/index.ts'
import { wholeTokensOf } from '../src/cache-profile.ts'
import { letters } from './prefix-cache-fixture.ts'

const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

const ROUTE = { provider: 'sim', model: 'reasoner' } as const
const SUMMARY = 'Goal: fix the loader. Files: src/loader.ts. Next: run the tests.'
/** Tokens of reasoning before the summary, per effort: at `max` no cap the window allows is enough. */
const REASONING: Record<string, number> = { max: 50_000, low: 100 }

/**
 * A host with the simulated provider cache on `profile`, a reasoning model whose summary answer
 * is reasoning only until the cap holds its reasoning and the summary, and one session at effort
 * `max` grown past the compaction threshold (automatic compaction off, so the test runs it).
 */
async function host(profile: string) {
  const context = await createTestContext()
  contexts.push(context)
  const { ctx } = context
  ctx.plugin(PrefixCacheService, { profile })
  mountWarmfoldHost(ctx, {
    engineConfig: {
      auto: false,
      thresholdRatio: 0.5,
      maxTokens: 300,
      summaryBudget: { retries: 2, fallbackEffort: 'low' },
    },
  })
  let step = 0
  const adapter = new ScriptedAdapter({
    // A window the whole last request leaves room in for the ladder's largest cap (1200).
    models: {
      reasoner: { contextWindow: 24000, defaultMaxTokens: 500, efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
    },
    responses: (request: GenerateOptions): ScriptedReply => {
      if (request.purpose === 'compaction') {
        if (request.maxTokens! < REASONING[request.reasoningEffort!]! + 100)
          return { content: [reasoningBlock('Going over the session again...')], finishReason: 'max-tokens' }
        return { content: [reasoningBlock('Done thinking.'), textBlock(SUMMARY)] }
      }
      step++
      return step % 2 === 0
        ? { content: `Read it (${step}).` }
        : {
            content: [
              textBlock(`Reading ${step}.`),
              toolCallBlock(`call-${step}`, 'read', `{"path":"src/${step}.ts"}`),
            ],
          }
    },
  })
  ctx.llm.registerAdapter(ROUTE.provider, adapter)
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object' },
    execute: () => letters(step, 1200),
  })
  const sent: GenerateOptions[] = []
  ctx.on('llm/stream', (request) => void sent.push(request))
  const agent = await ctx.agentLoop.create('budget', {
    ...ROUTE,
    reasoningEffort: 'max',
    system: 'You are a coding agent.',
  })
  for (let turn = 0; ctx.tokenMeter.measure(agent.session).totalTokens < 12800; turn++) {
    if (turn > 100) throw new Error('the session never reached the compaction threshold')
    agent.followup(`Continue (${turn}).`)
    await agent.whenIdle()
  }
  return { ...context, agent, sent }
}

/** Charges `request` against a fresh simulator that saw only `history`: what it costs on that cache. */
function chargeAfter(profile: string, history: readonly GenerateOptions[], request: GenerateOptions): CacheObservation {
  const cache = new PrefixCache(profile)
  for (const earlier of history) cache.observe(earlier)
  return cache.observe(request)
}

describe.each(['bytes', 'anthropic'])(
  'a summary retried with a larger cap keeps the prefix byte-identical (profile %s)',
  (profile) => {
    it('each retry costs what the first call cost, reads everything the first call wrote, and only the fallback effort breaks the cache', async () => {
      const { ctx, agent, sent, assertClean } = await host(profile)
      const conversationCalls = sent.length
      expect(await ctx.compaction.compactIfNeeded(agent, 'pressure')).not.toBeNull()

      const calls = sent.slice(conversationCalls)
      expect(calls.map((call) => [call.reasoningEffort, call.maxTokens])).toEqual([
        ['max', 300],
        ['max', 600],
        ['max', 1200],
        ['low', 1200],
      ])
      const observed = ctx.prefixCache.observations.slice(conversationCalls)
      const [first, ...rest] = observed
      const retries = rest.slice(0, 2)
      const fallback = rest[2]!

      // The first call is warm: it reads the conversation's prefix and first differs at its trailing instruction.
      expect(calls[0]!.messages.at(-1)!.content).toEqual([{ type: 'text', text: COMPACTION_INSTRUCTION }])
      expect(first!.divergence).toMatchObject({ part: 'message', index: calls[0]!.messages.length - 1 })
      expect(first!.cachedTokens).toBeGreaterThan(first!.uncachedTokens * 5)

      // Byte-identical: charged on the cache the first call met (the conversation only), each retry
      // leaves exactly the first call's tokens uncached. A retry that changed any prompt byte before
      // the instruction, or the envelope, would leave more.
      const history = sent.slice(0, conversationCalls)
      for (const [index, retry] of retries.entries()) {
        const call = calls[index + 1]!
        expect(chargeAfter(profile, history, call).uncachedTokens, `retry ${index + 1} on the first call's cache`).toBe(
          first!.uncachedTokens,
        )
        // On the live cache it reads everything the first call wrote: nothing of its prompt is new.
        expect(retry).toMatchObject({
          family: first!.family,
          promptChars: first!.promptChars,
          matchedChars: first!.promptChars,
          divergence: { part: 'none' },
        })
        expect(retry.cachedTokens).toBe(wholeTokensOf(retry.promptChars))
      }

      // The control: the fallback has the same messages at another effort, another cache family,
      // so on the same cache it is charged as a cold call. The assertion above can tell the two apart.
      expect(chargeAfter(profile, history, calls[3]!).uncachedTokens).toBe(fallback.promptTokens)
      expect(fallback).toMatchObject({ cachedTokens: 0, divergence: { part: 'envelope', field: 'reasoningEffort' } })

      // Every call is on the log with its envelope; the simulator's totals count each of them.
      const summary = agent.session.events.find(
        (event) => event.type === 'compaction/summary',
      ) as SessionEvent<'compaction/summary'>
      expect(
        summary.data.attempts?.map((attempt: SummaryAttempt) => [
          attempt.reason,
          attempt.reasoningEffort,
          attempt.maxTokens,
        ]),
      ).toEqual([
        ['first', 'max', 300],
        ['larger-cap', 'max', 600],
        ['larger-cap', 'max', 1200],
        ['fallback-effort', 'low', 1200],
      ])
      expect(ctx.prefixCache.totals((observation) => observation.purpose === 'compaction').requests).toBe(
        summary.data.attempts?.length,
      )
      assertClean()
    })
  },
)
