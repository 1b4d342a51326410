import { describe, expect, it } from 'vitest'
import { LATENCY_PROFILES, runWorkload } from '../src/index.ts'

// Under Anthropic's rules (writes only at breakpoints, a 20-block lookback, a 5-minute TTL) an
// entry at the end of the folded region exists only if a request ended there, several steps ago.
// At the opus-class latency a step takes about 75 s, so that entry has expired by the fold: a
// summary call that replays the region alone is cold (84,663 of 84,663 tokens uncached on this
// run). Replaying the whole last answered request reads its entry, written one step ago.
describe('a summary call on a breakpoint cache with slow steps', () => {
  it.each([false, true])(
    'replays the last answered request whole and reads it (background folds %s)',
    async (backgroundFold) => {
      const run = await runWorkload({
        window: 128_000,
        profile: 'anthropic',
        latency: LATENCY_PROFILES['opus-class'],
        backgroundFold,
      })
      expect(run.completed).toBe(true)
      expect(run.summaryCalls.length).toBeGreaterThanOrEqual(3)
      for (const call of run.summaryCalls) {
        expect(call.uncachedTokens).toBeLessThan(1000)
        expect(call.cachedTokens / call.promptTokens).toBeGreaterThan(0.99)
      }
      // Each replays a request the conversation sent, whole: its messages (the instruction aside) are that request's.
      for (const summary of run.requests.filter((request) => request.purpose === 'compaction')) {
        const replayed = summary.messages.slice(0, -1)
        const source = run.requests.find(
          (request) =>
            request.purpose === 'conversation' &&
            request.messages.length === replayed.length &&
            request.messages.every((message, index) => message === replayed[index]),
        )
        expect(source, 'the summary replays a whole conversation request').toBeDefined()
      }
    },
  )
})
