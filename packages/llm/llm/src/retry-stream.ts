// Shared by the HTTP adapters: one bounded retry loop for streamed calls, and the one decision of
// whether and how long to wait before the next attempt.
import { setTimeout as delay } from 'node:timers/promises'
import { LlmError } from './llm-error.ts'

/** The longest `retry-after` the adapter waits for by default; a longer one is handed to the caller. */
export const MAX_RETRY_AFTER_SECONDS = 60

/** What limits the wait before another attempt (see {@link nextRetry}). */
export interface RetryWaitPolicy {
  /** Retries after the first attempt; 0 disables retrying. */
  readonly maxRetries: number
  /** First backoff delay in milliseconds; doubles with every retry. */
  readonly retryBaseMs: number
  /**
   * The longest single wait in milliseconds, `retry-after` included (default
   * {@link MAX_RETRY_AFTER_SECONDS} × 1000). A server that asks for more is not retried early: its
   * error goes to the caller with `retryAfterSeconds`, so the host can schedule the retry.
   */
  readonly maxWaitMs?: number
  /**
   * Milliseconds left before the call's deadline, asked before each wait; absent, the call has
   * none. A wait that would not end before the deadline is not started: the error goes to the
   * caller as it is, instead of turning into a `TIMEOUT` halfway through the wait.
   */
  readonly remainingMs?: () => number
}

/** How {@link retryStream} retries. */
export interface StreamRetryPolicy extends RetryWaitPolicy {
  /** Aborts the wait between attempts. */
  readonly signal?: AbortSignal
  /** Maps anything an attempt throws to an `LlmError` (and an aborted wait to `ABORTED`). */
  readonly mapError: (error: unknown) => LlmError
}

/** What follows a failed attempt: a wait before the next one, or the error to throw. */
export type RetryStep = { readonly waitMs: number } | { readonly error: LlmError }

/**
 * The step after `error` ended attempt number `attempt` (0-based): wait and retry while the error
 * is `retryable`, retries are left and the wait fits; otherwise
 * the error to throw. That is `error` itself when nothing was retried and nothing cut a wait
 * short; else a copy (same code, status, `retryAfterSeconds`) whose message says how many attempts
 * were made and why no further one is.
 */
export function nextRetry(attempt: number, error: LlmError, policy: RetryWaitPolicy): RetryStep {
  if (!error.retryable || attempt >= policy.maxRetries)
    return { error: attempt === 0 ? error : withNote(error, `gave up after ${attempt + 1} attempts`) }
  const remainingMs = policy.remainingMs?.()
  const wait = waitFor(attempt, error, policy.retryBaseMs, { maxWaitMs: policy.maxWaitMs, remainingMs })
  if ('waitMs' in wait) return wait
  const tried = attempt === 0 ? 'not retried' : `gave up after ${attempt + 1} attempts`
  return { error: withNote(error, `${tried}: ${wait.why}`) }
}

/**
 * Streams `open(attempt)`, opening it again after a retryable failure, at most
 * `policy.maxRetries` times, waiting as {@link nextRetry} decides. A failure is retried only while
 * nothing has been yielded yet: once a chunk has reached the caller, a retry would duplicate
 * output, so the error is thrown. An abort is never retried, and aborting the wait throws
 * `ABORTED`. The final error says how many attempts were made, and why the retries stopped when
 * a wait was too long for `maxWaitMs` or the deadline.
 */
export async function* retryStream<T>(
  open: (attempt: number) => AsyncIterable<T>,
  policy: StreamRetryPolicy,
): AsyncGenerator<T> {
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
      if (started || policy.signal?.aborted)
        throw attempt === 0 ? error : withNote(error, `gave up after ${attempt + 1} attempts`)
      const step = nextRetry(attempt, error, policy)
      if ('error' in step) throw step.error
      try {
        await delay(step.waitMs, undefined, { signal: policy.signal })
      } catch (aborted) {
        throw policy.mapError(aborted)
      }
    }
  }
}

function waitFor(
  retry: number,
  error: LlmError,
  retryBaseMs: number,
  limits: { readonly maxWaitMs?: number; readonly remainingMs?: number },
): { waitMs: number } | { why: string } {
  const maxWaitMs = limits.maxWaitMs ?? MAX_RETRY_AFTER_SECONDS * 1000
  let waitMs: number
  if (error.retryAfterSeconds === undefined) {
    waitMs = Math.min(retryBaseMs * 2 ** retry, maxWaitMs)
  } else {
    waitMs = Math.ceil(error.retryAfterSeconds * 1000)
    if (waitMs > maxWaitMs)
      return {
        why:
          `the server asks to wait ${error.retryAfterSeconds} s (retry-after), longer than the adapter waits ` +
          `(${maxWaitMs / 1000} s); retry after that`,
      }
  }
  if (limits.remainingMs !== undefined && waitMs >= limits.remainingMs) {
    return {
      why:
        `waiting ${waitMs} ms for the next attempt would outlast the call's deadline ` +
        `(${Math.max(0, Math.floor(limits.remainingMs))} ms left)`,
    }
  }
  return { waitMs }
}

function withNote(error: LlmError, note: string): LlmError {
  return new LlmError(error.code, `${error.message} (${note})`, {
    status: error.status,
    provider: error.provider,
    retryable: error.retryable,
    retryAfterSeconds: error.retryAfterSeconds,
    cause: error.cause,
  })
}
