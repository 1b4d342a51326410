import type { ProxyObserver } from '../../src/index.ts'

/** Lets the observer's queue run dry (it analyses one exchange per turn of the event loop). */
export async function settle(observer: ProxyObserver): Promise<void> {
  while (observer.memory().queued > 0) await new Promise((resolve) => setImmediate(resolve))
}
