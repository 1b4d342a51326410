import type { EngineClock } from '@warmfold/compaction-basic'
import type { PrefixCache } from './prefix-cache.ts'

interface VirtualTimer {
  readonly due: number
  readonly callback: () => Promise<void> | void
  pending: boolean
}

/** Lets every pending promise reaction and I/O callback run before the clock moves on. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * The engine's clock on the simulator's virtual time: `now` is `cache.now`, and timers fire only
 * when the workload moves time on ({@link advance}: a request, a tool step, idle time) or when
 * the engine waits for a summary ({@link wait}), in due order. A modelled request that takes time
 * sleeps on it ({@link sleep}), so a background fold's summary call finishes at its virtual time
 * while the conversation goes on, and a fold the conversation waits for moves time forward by
 * exactly as long as it takes.
 */
export class VirtualClock implements EngineClock {
  private readonly timers: VirtualTimer[] = []

  constructor(private readonly cache: PrefixCache) {}

  now(): number {
    return this.cache.now
  }

  setTimeout(callback: () => Promise<void>, delayMs: number): () => void {
    const timer = this.schedule(callback, delayMs)
    return () => {
      timer.pending = false
    }
  }

  /** Resolves when the virtual clock reaches now + `ms`. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.schedule(resolve, ms))
  }

  /**
   * Waits for `work` as the conversation would: while it has not settled, time moves to the next
   * timer (at most `maxMs` on from now) and fires it. Returns `false` when `maxMs` passed first.
   */
  async wait(work: Promise<unknown>, maxMs: number): Promise<boolean> {
    let done = false
    void work.then(
      () => (done = true),
      () => (done = true),
    )
    const deadline = this.cache.now + maxMs
    let idle = 0
    for (;;) {
      await settle()
      if (done) return true
      const next = this.nextTimer(deadline)
      if (next) {
        idle = 0
        await this.fire(next)
        continue
      }
      if (this.cache.now >= deadline) return false
      // Nothing virtual is due: real work (a flush) may still be running; past a few turns of the
      // event loop with nothing left to happen, the rest of the wait passes.
      if (++idle < 5) continue
      if (!Number.isFinite(deadline)) continue
      this.moveTo(deadline)
      return false
    }
  }

  /**
   * Moves time `ms` on, firing every timer due on the way, in order, and letting what each starts run. With `agent`
   * (idle time between turns), after each timer (an idle fold starting, its summary arriving) and at the end it waits
   * for the agent to be idle again, so a swap while idle lands before the next turn.
   */
  async advance(ms: number, agent?: { whenIdle(): Promise<void> }): Promise<void> {
    const end = this.cache.now + ms
    for (let next = this.nextTimer(end); next; next = this.nextTimer(end)) {
      await this.fire(next)
      if (agent) await agent.whenIdle()
    }
    this.moveTo(end)
    await settle()
    if (agent) await agent.whenIdle()
  }

  private schedule(callback: VirtualTimer['callback'], delayMs: number): VirtualTimer {
    const timer: VirtualTimer = { due: this.cache.now + Math.max(0, delayMs), callback, pending: true }
    this.timers.push(timer)
    return timer
  }

  private nextTimer(until: number): VirtualTimer | undefined {
    let next: VirtualTimer | undefined
    for (const timer of this.timers)
      if (timer.pending && timer.due <= until && (!next || timer.due < next.due)) next = timer
    return next
  }

  private async fire(timer: VirtualTimer): Promise<void> {
    timer.pending = false
    this.timers.splice(this.timers.indexOf(timer), 1)
    this.moveTo(timer.due)
    await timer.callback()
    await settle()
  }

  private moveTo(time: number): void {
    if (time > this.cache.now) this.cache.advanceClock(time - this.cache.now)
  }
}
