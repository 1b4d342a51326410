import { describe, expect, it } from 'vitest'
import { PRICE_PROFILES } from '../src/index.ts'
import { runSubagentWorkload } from './subagent-workload-fixture.ts'

// A parent hands three search tasks to subagents after steps 8, 16 and 24: forks of the parent
// against cold subagents (own system prompt, no history, four context reads), in money.

describe('subagents: forks of the parent against cold subagents', { timeout: 60_000 }, () => {
  for (const [profile, price] of [
    ['anthropic', PRICE_PROFILES['anthropic-5m']],
    ['bytes', PRICE_PROFILES.openai],
  ] as const) {
    it(`${profile} cache at ${price.name} prices: forks cost less than cold subagents, and each fork's first request pays about its task`, async () => {
      const fork = await runSubagentWorkload({ strategy: 'fork', profile, price })
      const cold = await runSubagentWorkload({ strategy: 'cold', profile, price })
      // Nine subagents: a fork searches and answers (2 requests), a cold one first reads 4 files (6).
      expect(fork.subagentObservations).toHaveLength(9 * 2)
      expect(cold.subagentObservations).toHaveLength(9 * 6)
      const firsts = fork.subagentObservations.filter(
        (observation, index, all) => all.findIndex((other) => other.sessionId === observation.sessionId) === index,
      )
      expect(firsts).toHaveLength(9)
      // The task is about 18 tokens: each fork's first request pays it plus the message framing.
      for (const first of firsts) expect(first.uncachedTokens).toBeLessThanOrEqual(18 + 50)
      expect(fork.subagentCost.total).toBeLessThan(cold.subagentCost.total)
      expect(fork.usd!).toBeLessThan(cold.usd!)
    })
  }
})
