// Shared by the HTTP adapters: one bounded retry loop for streamed calls, and the one decision of
// whether and how long to wait before the next attempt.
import { setTimeout as delay } from 'node:timers/promises'
import { LlmError } from './llm-error.ts'

/** The longest `retry-after` the adapter waits for by default; a longer one is handed to the caller. */
export const MAX_RETRY_AFTER_SECONDS = 60

/**
 * How long an HTTP adapter's call may take and how it is retried: the keys every adapter config
 * shares (`resilientStream` enforces them; defaults and what counts as progress: each README).
 */
export interface AttemptLimits {
  /**
   * Milliseconds one attempt may wait for the response headers, and then for stream progress (an
   * event that carries content, a tool call, new usage or the stop; pings and empty deltas do not).
   */
  readonly timeoutMs: number
  /**
   * Wall-clock milliseconds one call may take in total (every attempt, the waits between them and
   * the streaming); when it is over, the call fails with `TIMEOUT`. Absent: no overall limit.
   */
  readonly deadlineMs?: number
  /** Retries after a retryable failure (a 429, a 5xx, a lost connection), only before any output. */
  readonly maxRetries: number
  /** First backoff delay in milliseconds; doubles with every retry (a `retry-after` wins). */
  readonly retryBaseMs: number
}

/** What limits the wait before another attempt (see {@link nextRetry}). */
export interface RetryWaitPolicy extends Pick<AttemptLimits, 'maxRetries' | 'retryBaseMs'> {
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
 * is `retryable`, retries are left and the wait fits (the server's `retry-after`, else
 * `retryBaseMs × 2^attempt` capped at `maxWaitMs`); otherwise the error to throw. That is `error`
 * itself when nothing was retried and nothing cut a wait short; else a copy (same code, status,
 * `retryAfterSeconds`) whose message says how many attempts were made and why no further one is.
 */
export function nextRetry(attempt: number, error: LlmError, policy: RetryWaitPolicy): RetryStep {
  const tried = attempt === 0 ? 'not retried' : `gave up after ${attempt + 1} attempts`
  if (!error.retryable || attempt >= policy.maxRetries) return { error: attempt === 0 ? error : withNote(error, tried) }
  const remainingMs = policy.remainingMs?.()
  const maxWaitMs = policy.maxWaitMs ?? MAX_RETRY_AFTER_SECONDS * 1000
  const retryAfter = error.retryAfterSeconds
  // No jitter, so runs are reproducible; only a retry-after can ask for more than maxWaitMs.
  const waitMs =
    retryAfter === undefined ? Math.min(policy.retryBaseMs * 2 ** attempt, maxWaitMs) : Math.ceil(retryAfter * 1000)
  if (waitMs > maxWaitMs) {
    const why = `the server asks to wait ${retryAfter} s (retry-after), longer than the adapter waits`
    return { error: withNote(error, `${tried}: ${why} (${maxWaitMs / 1000} s); retry after that`) }
  }
  if (remainingMs !== undefined && waitMs >= remainingMs) {
    const why = `waiting ${waitMs} ms for the next attempt would outlast the call's deadline`
    return { error: withNote(error, `${tried}: ${why} (${Math.max(0, Math.floor(remainingMs))} ms left)`) }
  }
  return { waitMs }
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

function withNote(error: LlmError, note: string): LlmError {
  return new LlmError(error.code, `${error.message} (${note})`, {
    status: error.status,
    provider: error.provider,
    retryable: error.retryable,
    retryAfterSeconds: error.retryAfterSeconds,
    cause: error.cause,
  })
}
