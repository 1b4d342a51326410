import type { EngineClock } from '../src/engine-clock.ts'

interface Timer {
  readonly due: number
  readonly callback: () => Promise<void>
  state: 'pending' | 'cancelled' | 'fired'
}

/** An idle clock the test moves by hand: timers fire only in `advance`, whose promise waits for them. */
export class ManualIdleClock implements EngineClock {
  time = 1_000_000
  private readonly timers: Timer[] = []

  now(): number {
    return this.time
  }

  setTimeout(callback: () => Promise<void>, delayMs: number): () => void {
    const timer: Timer = { due: this.time + delayMs, callback, state: 'pending' }
    this.timers.push(timer)
    return () => {
      if (timer.state === 'pending') timer.state = 'cancelled'
    }
  }

  /** Due times of the timers neither fired nor cancelled. */
  pending(): number[] {
    return this.timers.filter((timer) => timer.state === 'pending').map((timer) => timer.due)
  }

  /** Moves the clock by `ms` without firing anything (a suspended machine): timers due meanwhile fire late, at the next `advance`. */
  suspend(ms: number): void {
    this.time += ms
  }

  /** Moves the clock by `ms`, firing (and awaiting) every timer that falls due on the way, in order (an overdue one at once). */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms
    for (;;) {
      const next = this.timers
        .filter((timer) => timer.state === 'pending' && timer.due <= target)
        .toSorted((a, b) => a.due - b.due)[0]
      if (!next) break
      this.time = Math.max(this.time, next.due)
      next.state = 'fired'
      await next.callback()
    }
    this.time = target
  }
}
