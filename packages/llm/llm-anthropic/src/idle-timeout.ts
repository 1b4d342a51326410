import type { LlmError } from '@warmfold/llm'

/**
 * Yields `source`'s items, but fails with `failure()` (a `TIMEOUT` LlmError) when no item arrives for
 * `timeoutMs`. The SDK's own timeout only covers the wait for response headers, so without this a
 * stream that stalls after it started would hang forever. `onTimeout` cancels the request.
 */
export async function* withIdleTimeout<T>(source: AsyncIterable<T>, timeoutMs: number, failure: () => LlmError, onTimeout: () => void): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]()
  try {
    while (true) {
      let timer: ReturnType<typeof setTimeout> | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          onTimeout()
          reject(failure())
        }, timeoutMs)
      })
      let next: IteratorResult<T>
      try {
        next = await Promise.race([iterator.next(), timeout])
      } finally {
        clearTimeout(timer)
      }
      if (next.done) return
      yield next.value
    }
  } finally {
    await iterator.return?.()?.catch(() => undefined)
  }
}
