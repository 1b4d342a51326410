// Shared by the HTTP adapters: one bounded retry loop for streamed calls.
import { setTimeout as delay } from 'node:timers/promises'
import { LlmError } from './llm-error.ts'

/** The longest `retry-after` the adapter waits for; a longer one is handed to the caller. */
export const MAX_RETRY_AFTER_SECONDS = 60

/** How {@link retryStream} retries. */
export interface StreamRetryPolicy {
  /** Retries after the first attempt; 0 disables retrying. */
  readonly maxRetries: number
  /** First backoff delay in milliseconds; doubles with every retry. */
  readonly retryBaseMs: number
  /** Aborts the wait between attempts. */
  readonly signal?: AbortSignal
  /** Maps anything an attempt throws to an `LlmError` (and an aborted wait to `ABORTED`). */
  readonly mapError: (error: unknown) => LlmError
}

/**
 * Milliseconds to wait before retry number `retry` (0-based): the server's `retry-after` when it
 * sent one, else `retryBaseMs × 2^retry` (no jitter, so runs are reproducible). `undefined` when
 * the server asks for more than {@link MAX_RETRY_AFTER_SECONDS}: the caller decides then.
 */
export function streamRetryDelayMs(retry: number, error: LlmError, retryBaseMs: number): number | undefined {
  if (error.retryAfterSeconds !== undefined) {
    return error.retryAfterSeconds > MAX_RETRY_AFTER_SECONDS ? undefined : Math.ceil(error.retryAfterSeconds * 1000)
  }
  return retryBaseMs * 2 ** retry
}

/**
 * Streams `open(attempt)`, opening it again after a retryable failure, at most
 * `policy.maxRetries` times. A failure is retried only while nothing has been yielded yet:
 * once a chunk has reached the caller, a retry would duplicate output, so the error is thrown.
 * An abort is never retried, and aborting the wait throws `ABORTED`. The final error says how
 * many attempts were made.
 */
export async function* retryStream<T>(open: (attempt: number) => AsyncIterable<T>, policy: StreamRetryPolicy): AsyncGenerator<T> {
  for (let attempt = 0; ; attempt++) {
    let started = false
    try {
      for await (const item of open(attempt)) {
        started = true
        yield item
      }
      return
    } catch (thrown) {
      const error = policy.mapError(thrown)
      const wait = started || !error.retryable || attempt >= policy.maxRetries || policy.signal?.aborted ? undefined : streamRetryDelayMs(attempt, error, policy.retryBaseMs)
      if (wait === undefined) throw attempt === 0 ? error : afterAttempts(error, attempt + 1)
      try {
        await delay(wait, undefined, { signal: policy.signal })
      } catch (aborted) {
        throw policy.mapError(aborted)
      }
    }
  }
}

function afterAttempts(error: LlmError, attempts: number): LlmError {
  return new LlmError(error.code, `${error.message} (gave up after ${attempts} attempts)`, {
    status: error.status,
    provider: error.provider,
    retryable: error.retryable,
    retryAfterSeconds: error.retryAfterSeconds,
    cause: error.cause,
  })
}
