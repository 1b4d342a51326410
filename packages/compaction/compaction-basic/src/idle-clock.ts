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

/** Real time: `Date.now` and an unref'd `setTimeout`, so a pending idle fold never keeps a process alive. */
export const REAL_TIME_CLOCK: IdleClock = Object.freeze({
  now: () => Date.now(),
  setTimeout(callback: () => Promise<void>, delayMs: number): () => void {
    const timer = setTimeout(() => void callback(), delayMs)
    timer.unref?.()
    return () => clearTimeout(timer)
  },
})
