/**
 * The clock the engine keeps time on: when a fold started and was ready, how long the
 * conversation waited, when an idle fold is due. The default is real time; a simulator with a
 * virtual clock (the bench's workload) passes its own, so seconds are virtual seconds.
 */
export interface EngineClock {
  /** The current time in milliseconds. */
  now(): number
  /**
   * Runs `callback` after `delayMs` milliseconds; returns a function that cancels it (a no-op
   * once it ran). A virtual clock may await the returned promise of `callback`.
   */
  setTimeout(callback: () => Promise<void>, delayMs: number): () => void
  /**
   * Waits until `work` settles or `maxMs` have passed, whichever comes first: `true` when it
   * settled (the caller reads its outcome from `work` itself), `false` on time. The engine waits
   * through this for every summary call the conversation waits for, so a virtual clock can move
   * its time forward while it does (nothing else would). Optional: without it the engine races
   * `work` against `setTimeout`.
   */
  wait?(work: Promise<unknown>, maxMs: number): Promise<boolean>
}

/** The longest delay Node's `setTimeout` honours (2³¹ − 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1

/**
 * Real time: `Date.now` and an unref'd `setTimeout`, so a pending fold or timer never keeps a
 * process alive. A delay beyond {@link MAX_TIMER_DELAY_MS} (a model with a cache TTL of weeks)
 * is waited out in chained timers instead of firing at once.
 */
export const REAL_TIME_CLOCK: EngineClock = Object.freeze({
  now: () => Date.now(),
  setTimeout(callback: () => Promise<void>, delayMs: number): () => void {
    let timer: ReturnType<typeof setTimeout>
    const arm = (remaining: number): void => {
      timer = setTimeout(
        () => (remaining > MAX_TIMER_DELAY_MS ? arm(remaining - MAX_TIMER_DELAY_MS) : void callback()),
        Math.min(remaining, MAX_TIMER_DELAY_MS),
      )
      timer.unref?.()
    }
    arm(delayMs)
    return () => clearTimeout(timer)
  },
})

/**
 * `clock.wait(work, maxMs)`, or for a clock without `wait`, `work` raced against the clock's own
 * timer. An infinite `maxMs` waits for `work` alone. `true` when `work` settled; `false` on time,
 * or as soon as `signal` aborts (the caller tells the two apart by `signal.aborted`): an aborted
 * turn or an unloading engine never sits out the rest of the wait.
 */
export async function waitOn(
  clock: EngineClock,
  work: Promise<unknown>,
  maxMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  if (signal?.aborted) return false
  let stop: (() => void) | undefined
  const aborted =
    signal &&
    new Promise<'aborted'>((resolve) => {
      stop = () => resolve('aborted')
      signal.addEventListener('abort', stop, { once: true })
    })
  // A virtual clock moves its time on until this settles: the abort ends its wait too.
  const watched = aborted ? Promise.race([work, aborted]) : work
  try {
    const settled = await waitOnClock(clock, watched, maxMs)
    return settled && !signal?.aborted
  } finally {
    if (stop) signal?.removeEventListener('abort', stop)
  }
}

function waitOnClock(clock: EngineClock, work: Promise<unknown>, maxMs: number): Promise<boolean> {
  if (clock.wait) return clock.wait(work, maxMs)
  const settled = work.then(
    () => true,
    () => true,
  )
  if (!Number.isFinite(maxMs)) return settled
  let cancel: (() => void) | undefined
  const timeout = new Promise<boolean>((resolve) => {
    cancel = clock.setTimeout(async () => resolve(false), Math.max(0, maxMs))
  })
  return Promise.race([settled, timeout]).finally(() => cancel?.())
}
