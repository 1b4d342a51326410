import { Context } from '@cordisjs/core'
import type { PruneDecisionData } from '@warmfold/compaction'
import type { ModelInfo } from '@warmfold/llm'
import { textBlock, toolCallBlock } from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { describe, expect, it } from 'vitest'
import type { PriceProfile } from '../src/index.ts'
import {
  fillerText,
  mountWarmfoldHost,
  PRICE_PROFILES,
  PrefixCacheService,
  requestCost,
  sumCosts,
} from '../src/index.ts'

const ANTHROPIC_5M = PRICE_PROFILES['anthropic-5m']

/**
 * The host a new user built (issue [3.1]): an Anthropic-shaped cache (breakpoints, 5-minute TTL,
 * writes at 1.25×), a pruner with `thresholdChars` 5,000, 6 KB tool results and two tools, a
 * window the session outgrows twice. Only the model's content is scripted.
 */
async function runHost(options: { pruner: boolean; price: PriceProfile; steps: number; background?: boolean }) {
  const ctx = new Context()
  await ctx.start()
  try {
    ctx.plugin(PrefixCacheService, { profile: 'anthropic' })
    const cache = ctx.prefixCache.cache
    mountWarmfoldHost(ctx, {
      // Prune decisions are made on the pressure path: background folds (on unless asked for)
      // fold before the request reaches the threshold.
      engineConfig: { idle: { enabled: false }, background: { enabled: options.background ?? false } },
      ...(options.pruner ? { pruner: { thresholdChars: 5000, headChars: 3000, tailChars: 1000 } } : {}),
    })
    const model: ModelInfo = {
      contextWindow: 40_000,
      defaultMaxTokens: 2000,
      cacheTtlMs: cache.profile.ttlMs,
      cachePrices: { read: options.price.cacheRead, write: options.price.cacheWrite },
    }
    let step = 0
    const outputTokens = new Map<number, number>()
    ctx.llm.registerAdapter(
      'anthropic',
      new ScriptedAdapter({
        models: { claude: model },
        responses: (request) => {
          const index = cache.observations.length - 1
          if (request.purpose === 'compaction') {
            outputTokens.set(index, 300)
            return {
              content: 'Goal: refactor the loader. Read: src/module-0.ts … src/module-N.ts. Next: write the plan.',
            }
          }
          outputTokens.set(index, 60)
          if (step >= options.steps) return { content: 'Done: every module is read.' }
          const call = step++
          const tool = call % 2 === 0 ? 'read_file' : 'grep'
          return {
            content: [
              textBlock(`Step ${call}: ${fillerText(call, 200)}`),
              toolCallBlock(`call-${call}`, tool, `{"path":"src/module-${call}.ts"}`),
            ],
          }
        },
      }),
    )
    for (const name of ['read_file', 'grep']) {
      ctx.tools.register({
        name,
        description: name,
        parameters: { type: 'object' },
        execute: () => fillerText(10_000 + step, 6000),
      })
    }
    // Each request takes 15 virtual seconds: the TTL never runs out within the session.
    ctx.on('llm/stream', () => void cache.advanceClock(15_000))
    const agent = await ctx.agentLoop.create('host', {
      provider: 'anthropic',
      model: 'claude',
      system: 'You are a coding agent.',
    })
    const result = await agent.followup('Refactor the module loader: read every module first.')
    const observations = cache.observations
    const cost = sumCosts(
      observations.map((observation) =>
        requestCost({ ...observation, outputTokens: outputTokens.get(observation.index) ?? 0 }, options.price),
      ),
    )
    const decisions = agent.session.events
      .filter((event) => event.type === 'compaction/prune-decision')
      .map((event) => event.data as PruneDecisionData)
    const prunes = agent.session.events.filter((event) => event.type === 'compaction/prune').length
    const folds = observations.filter((observation) => observation.purpose === 'compaction').length
    return { result, cost: cost.total, decisions, prunes, folds }
  } finally {
    await ctx.stop()
  }
}

describe('a prune pass lands only where it pays', () => {
  it("the new host's case: with the pruner the session costs no more than without it, and every declined pass says why", async () => {
    const withPruner = await runHost({ pruner: true, price: ANTHROPIC_5M, steps: 50 })
    const without = await runHost({ pruner: false, price: ANTHROPIC_5M, steps: 50 })
    expect(withPruner.result.reason).toBe('stop')
    expect(without.result.reason).toBe('stop')
    expect(without.folds).toBeGreaterThanOrEqual(2)
    // Before the decision, 3 of 4 cache breaks in this host were prune-only passes and the
    // pruner cost 12 % more; a pass that would rewrite cached history for a small saving now
    // waits for the fold, where pruning the retained tail is free (rule C4).
    expect(withPruner.decisions.length).toBeGreaterThan(0)
    for (const decision of withPruner.decisions) {
      expect(decision.cacheRead).toBe(0.1)
      expect(decision.cacheWrite).toBe(1.25)
      if (decision.action === 'fold') expect(decision.saving).toBeLessThanOrEqual(decision.cost)
      else expect(decision.saving).toBeGreaterThan(decision.cost)
    }
    expect(withPruner.decisions.some((decision) => decision.action === 'fold')).toBe(true)
    expect(withPruner.cost).toBeLessThanOrEqual(without.cost)
    // The pruner still earns its keep inside folds: it shortens the retained tail.
    expect(withPruner.prunes).toBeGreaterThan(0)
  })

  it('with background folds the pruner still costs no more: it prunes only the retained tail after each swap', async () => {
    const withPruner = await runHost({ pruner: true, price: ANTHROPIC_5M, steps: 50, background: true })
    const without = await runHost({ pruner: false, price: ANTHROPIC_5M, steps: 50, background: true })
    expect(withPruner.result.reason).toBe('stop')
    expect(without.folds).toBeGreaterThanOrEqual(2)
    // No request reached the threshold, so no prune pass was weighed there.
    expect(withPruner.decisions).toEqual([])
    expect(withPruner.prunes).toBeGreaterThan(0)
    expect(withPruner.cost).toBeLessThanOrEqual(without.cost)
  })

  it('a rewrite costs nothing extra where reads cost as much as writes, so there the pass lands', async () => {
    const flat: PriceProfile = {
      name: 'no cache discount',
      cacheRead: 1,
      cacheWrite: 1,
      output: 5,
      usdPerMillionInput: null,
    }
    const run = await runHost({ pruner: true, price: flat, steps: 50 })
    expect(run.result.reason).toBe('stop')
    expect(run.decisions.length).toBeGreaterThan(0)
    expect(run.decisions.every((decision) => decision.action === 'prune' && decision.cost === 0)).toBe(true)
  })
})
