import { describe, expect, it } from 'vitest'
import { runWorkload } from '../src/index.ts'

// Idle folds under Anthropic's rules (writes only at breakpoints, 20-block lookback, 5-minute TTL):
// 15 virtual minutes between turns, so without a fold every turn would restart cold.
const workload = { window: 16000, steps: 40, turns: 4, idleSeconds: 900, profile: 'anthropic' } as const

describe('idle compaction in the workload', () => {
  it('folds before the cache expires with a warm summary call: only the instruction is uncached', async () => {
    const run = await runWorkload(workload)
    expect(run.completed).toBe(true)
    const triggers = run.session.events.filter((event) => event.type === 'compaction/start').map((event) => (event.data as { trigger: string }).trigger)
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
    expect(off.session.events.some((event) => event.type === 'compaction/start' && (event.data as { trigger: string }).trigger === 'idle')).toBe(false)
    expect(on.totals.uncachedTokens).toBeLessThan(off.totals.uncachedTokens)
  })
})
