import { describe, expect, it } from 'vitest'
import { runWorkload } from '../src/index.ts'

// Idle folds under Anthropic's rules (writes only at breakpoints, 20-block lookback, 5-minute TTL):
// 15 virtual minutes between turns, so without a fold every turn would restart cold. Background
// folds are off so the idle timer is what folds (with them on, the fold armed at the soft
// threshold is usually swapped in as the turn ends, and the idle timer finds nothing to fold).
const workload = {
  window: 16000,
  steps: 40,
  turns: 4,
  idleSeconds: 900,
  profile: 'anthropic',
  backgroundFold: false,
} as const

describe('idle compaction in the workload', () => {
  it('folds before the cache expires with a warm summary call: only the instruction is uncached', async () => {
    const run = await runWorkload(workload)
    expect(run.completed).toBe(true)
    const triggers = run.session.events
      .filter((event) => event.type === 'compaction/start')
      .map((event) => (event.data as { trigger: string }).trigger)
    expect(triggers.filter((trigger) => trigger === 'idle').length).toBeGreaterThanOrEqual(1)
    // Each summary call reads the whole conversation it replays; the instruction (~386 tokens) is new.
    expect(run.summaryCalls.length).toBe(triggers.length)
    triggers.forEach((trigger, index) => {
      if (trigger === 'idle') expect(run.summaryCalls[index]?.uncachedTokens).toBeLessThan(1000)
    })
  })

  it('costs less than the same run without idle folds', async () => {
    const on = await runWorkload(workload)
    const off = await runWorkload({ ...workload, idleCompaction: false })
    expect(
      off.session.events.some(
        (event) => event.type === 'compaction/start' && (event.data as { trigger: string }).trigger === 'idle',
      ),
    ).toBe(false)
    expect(on.totals.uncachedTokens).toBeLessThan(off.totals.uncachedTokens)
  })

  it('with background folds on, a fold armed before the turn ended is swapped in while the agent is idle, before the cache expires', async () => {
    const run = await runWorkload({ ...workload, backgroundFold: true })
    const off = await runWorkload({ ...workload, idleCompaction: false })
    expect(run.completed).toBe(true)
    const events = run.session.events
    const idleSwaps = events.filter((event) => {
      if (event.type !== 'compaction/end' || (event.data as { error?: string }).error !== undefined) return false
      // The bracket closed between a turn/end and the next turn/start: swapped in while idle.
      const before = events
        .slice(0, events.indexOf(event))
        .findLast((other) => other.type === 'turn/start' || other.type === 'turn/end')
      return before?.type === 'turn/end'
    })
    expect(idleSwaps.length).toBeGreaterThanOrEqual(1)
    for (const call of run.summaryCalls) expect(call.uncachedTokens).toBeLessThan(1000)
    expect(run.totals.uncachedTokens).toBeLessThan(off.totals.uncachedTokens)
  })
})
