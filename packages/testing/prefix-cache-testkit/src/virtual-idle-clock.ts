import type { IdleClock } from '@warmfold/compaction-basic'
import type { PrefixCache } from './prefix-cache.ts'

interface VirtualTimer {
  readonly due: number
  readonly callback: () => Promise<void>
  pending: boolean
}

/**
 * The engine's idle clock on the simulator's virtual clock: `now` is `cache.now`, and timers
 * fire only while the workload lets idle time pass ({@link advance}), at their virtual due time,
 * so an idle fold is charged at the moment it would happen (cache still warm or not).
 */
export class VirtualIdleClock implements IdleClock {
  private readonly timers: VirtualTimer[] = []

  constructor(private readonly cache: PrefixCache) {}

  now(): number {
    return this.cache.now
  }

  setTimeout(callback: () => Promise<void>, delayMs: number): () => void {
    const timer: VirtualTimer = { due: this.cache.now + delayMs, callback, pending: true }
    this.timers.push(timer)
    return () => {
      timer.pending = false
    }
  }

  /**
   * Lets `ms` of idle time pass: each timer due on the way fires at its time and the agent's
   * work it starts is awaited (its requests advance the clock as any request does); the clock
   * then stands at the end of the idle time, or later when that work took longer.
   */
  async advance(ms: number, agent: { whenIdle(): Promise<void> }): Promise<void> {
    const end = this.cache.now + ms
    for (;;) {
      const next = this.timers.filter((timer) => timer.pending && timer.due <= end).toSorted((a, b) => a.due - b.due)[0]
      if (!next) break
      next.pending = false
      if (next.due > this.cache.now) this.cache.advanceClock(next.due - this.cache.now)
      await next.callback()
      await agent.whenIdle()
    }
    if (end > this.cache.now) this.cache.advanceClock(end - this.cache.now)
  }
}
