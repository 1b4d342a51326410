/**
 * The clock the idle compaction schedules on. The default is real time; a simulator with a
 * virtual clock (the bench's workload) passes its own, so the timer fires at virtual time.
 */
export interface IdleClock {
  /** The current time in milliseconds. */
  now(): number
  /**
   * Runs `callback` after `delayMs` milliseconds; returns a function that cancels it (a no-op
   * once it ran). A virtual clock may await the returned promise of `callback`.
   */
  setTimeout(callback: () => Promise<void>, delayMs: number): () => void
}

/** The longest delay Node's `setTimeout` honours (2³¹ − 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1

/**
 * Real time: `Date.now` and an unref'd `setTimeout`, so a pending idle fold never keeps a process
 * alive. A delay beyond {@link MAX_TIMER_DELAY_MS} (a model with a cache TTL of weeks) is waited
 * out in chained timers instead of firing at once.
 */
export const REAL_TIME_CLOCK: IdleClock = Object.freeze({
  now: () => Date.now(),
  setTimeout(callback: () => Promise<void>, delayMs: number): () => void {
    let timer: ReturnType<typeof setTimeout>
    const arm = (remaining: number): void => {
      timer = setTimeout(() => (remaining > MAX_TIMER_DELAY_MS ? arm(remaining - MAX_TIMER_DELAY_MS) : void callback()), Math.min(remaining, MAX_TIMER_DELAY_MS))
      timer.unref?.()
    }
    arm(delayMs)
    return () => clearTimeout(timer)
  },
})
