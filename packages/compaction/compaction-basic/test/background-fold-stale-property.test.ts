import type { AnySessionEvent, Session } from '@warmfold/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { CompactionEndData } from './background-fold-fixture.ts'
import { agentOf, backgroundHost, THRESHOLD, until } from './background-fold-fixture.ts'
import { SUMMARY } from './engine-fixture.ts'

/** One step of a random run. */
type Action =
  /** A user turn whose one tool call returns `chars` characters (up to about 2,500 tokens). */
  | { readonly kind: 'turn'; readonly chars: number }
  /** From now on, background summary calls are slow: held until released. */
  | { readonly kind: 'hold' }
  /** The held calls answer. */
  | { readonly kind: 'release' }

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('turn' as const), chars: fc.integer({ min: 200, max: 10_000 }) }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'hold' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'release' as const }) },
)

/** What one run saw at each background swap and each stale discard. */
interface Observed {
  /** The request right after each background swap (before the tail prune that follows it), with S. */
  readonly swaps: Array<{ readonly tokens: number; readonly soft: number; readonly seq: number }>
  /** The request each stale discard said the swap would have left, with S. */
  readonly stale: Array<{ readonly projected: number; readonly soft: number; readonly seq: number }>
}

async function run(actions: readonly Action[], startRatio: number): Promise<Observed> {
  // A fixed S, so the test knows the bound the swap validates against.
  const host = await backgroundHost({ background: { startRatio } })
  const { harness, summaries, clock } = host
  const soft = Math.floor(startRatio * THRESHOLD)
  const observed: Observed = { swaps: [], stale: [] }
  harness.ctx.on('session/event', (session: Session, event: AnySessionEvent) => {
    if (event.type !== 'compaction/end') return
    const data = event.data as CompactionEndData
    if (data.timing?.mode === 'background' && data.error === undefined)
      observed.swaps.push({ tokens: harness.ctx.tokenMeter.measure(session).totalTokens, soft, seq: event.seq })
    if (data.discarded?.reason === 'stale') {
      const projected = Number(/would be about (\d+) tokens/.exec(data.discarded.detail)?.[1])
      observed.stale.push({ projected, soft, seq: event.seq })
    }
  })
  try {
    const agent = await agentOf(host)
    const turn = async (chars: number) => {
      host.results.push(chars)
      agent.followup('Go on.')
      let idle = false
      void agent.whenIdle().then(() => (idle = true))
      for (;;) {
        await until(() => idle || clock.pending().length > 0, 'the turn ending or waiting at H')
        if (idle) return
        // Waiting at H for a held fold: it answers.
        summaries.hold = false
        for (const held of summaries.held.splice(0)) held.release()
        await until(() => idle || clock.pending().length === 0, 'the wait at H ending')
      }
    }
    for (let warmup = 0; warmup < 5; warmup++) await turn(1200)
    for (const step of actions) {
      if (step.kind === 'turn') await turn(step.chars)
      else if (step.kind === 'hold') summaries.hold = true
      else {
        summaries.hold = false
        for (const held of summaries.held.splice(0)) held.release({ content: SUMMARY })
        await host.engine.whenFoldsSettle(agent.session)
      }
    }
    summaries.hold = false
    for (const held of summaries.held.splice(0)) held.release()
    await host.engine.whenFoldsSettle(agent.session)
    harness.assertClean()
    return observed
  } finally {
    await harness.dispose()
  }
}

describe('the stale boundary of a background swap, over random runs', () => {
  it('never swaps in a fold whose request after the swap is at or above S, and discards as stale only such folds', async () => {
    let swaps = 0
    let discards = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 10, maxLength: 24 }),
        fc.constantFrom(0.5, 0.6, 0.7),
        async (actions, startRatio) => {
          const observed = await run(actions, startRatio)
          swaps += observed.swaps.length
          discards += observed.stale.length
          for (const swap of observed.swaps) expect(swap.tokens, `the swap at seq ${swap.seq}`).toBeLessThan(swap.soft)
          for (const stale of observed.stale)
            expect(stale.projected, `the stale discard at seq ${stale.seq}`).toBeGreaterThanOrEqual(stale.soft)
        },
      ),
      { numRuns: 12, seed: 4242 },
    )
    // The runs reached both sides of the boundary: folds swapped in and folds discarded as stale.
    expect(swaps).toBeGreaterThan(0)
    expect(discards).toBeGreaterThan(0)
  }, 120_000)
})
