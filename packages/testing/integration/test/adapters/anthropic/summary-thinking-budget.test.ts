import { afterEach, describe, expect, it } from 'vitest'
import type { LoopHarness } from './loop-fixture.ts'
import { isCompaction, LOOP_MODEL, mountLoop } from './loop-fixture.ts'

const harnesses: LoopHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

describe('a summary call at a thinking effort, with the engine and the adapter as shipped', () => {
  it.each([
    ['high', 8192],
    ['max', 24576],
  ] as const)(
    "effort %s: max_tokens is above the %i-token thinking budget by the engine's summary budget, and the fold commits",
    async (effort, budget) => {
      // Default engine config, default thinking budgets: before, the summary's 8192-token cap was
      // at or below the budget and every compaction failed as INVALID_REQUEST.
      const harness = await mountLoop({
        engine: {},
        thinkingBudgets: null,
        effort,
        steps: 36,
        resultChars: 12_000,
        model: {
          contextWindow: 120_000,
          defaultMaxTokens: 32_000,
          efforts: ['off', 'high', 'max'],
          defaultEffort: 'off',
        },
      })
      harnesses.push(harness)
      const agent = await harness.run()
      const summaries = harness.exchanges().filter(({ request }) => isCompaction(request.body))
      expect(summaries.length).toBeGreaterThan(0)
      for (const { request } of summaries) {
        expect(request.body.model).toBe(LOOP_MODEL)
        expect(request.body.thinking).toEqual({ type: 'enabled', budget_tokens: budget })
        expect(request.body.max_tokens).toBe(budget + 8192)
      }
      expect(agent.session.events.filter((event) => event.type === 'compaction/summary').length).toBe(summaries.length)
      expect(
        agent.session.events.some((event) => event.type === 'compaction/end' && 'error' in (event.data as object)),
      ).toBe(false)
      expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: 'stop' })
      harness.assertClean()
    },
  )
})
