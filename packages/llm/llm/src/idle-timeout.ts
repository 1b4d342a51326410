import type { LlmError } from './llm-error.ts'

/** How {@link withIdleTimeout} watches a stream. */
export interface IdleWatch<T> {
  /** Milliseconds of waiting without progress after which the stream fails. */
  readonly timeoutMs: number
  /** Whether an item is progress; other items (keep-alive pings, empty deltas) do not restart the budget. */
  readonly isProgress: (item: T) => boolean
  /** The error (a `TIMEOUT` LlmError) to throw when the budget runs out. */
  readonly failure: () => LlmError
  /** Cancels the underlying request. */
  readonly onTimeout: () => void
}

/**
 * Yields `source`'s items, but fails with `watch.failure()` once `watch.timeoutMs` of waiting has
 * passed since the last item that made progress. The SDK's own timeout only covers the wait for
 * response headers, and a server that keeps sending pings or empty deltas must not keep a dead
 * call alive, so only progress restarts the budget. Only time spent waiting on the source
 * counts: a consumer that takes its time between items does not use it up.
 */
export async function* withIdleTimeout<T>(source: AsyncIterable<T>, watch: IdleWatch<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]()
  let waited = 0
  try {
    while (true) {
      let timer: ReturnType<typeof setTimeout> | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => {
            watch.onTimeout()
            reject(watch.failure())
          },
          Math.max(0, watch.timeoutMs - waited),
        )
      })
      const started = performance.now()
      let next: IteratorResult<T>
      try {
        next = await Promise.race([iterator.next(), timeout])
      } finally {
        clearTimeout(timer)
        waited += performance.now() - started
      }
      if (next.done) return
      if (watch.isProgress(next.value)) waited = 0
      yield next.value
    }
  } finally {
    await iterator.return?.()?.catch(() => undefined)
  }
}
