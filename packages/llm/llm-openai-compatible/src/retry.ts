import type { LlmError, LlmErrorCode } from '@warmfold/llm'

/** How failed requests are retried. */
export interface RetryPolicy {
  /** Retries after the first attempt (0 = never retry). */
  readonly maxRetries: number
  /** First backoff in milliseconds; retry n waits about `retryBaseMs × 2ⁿ`. */
  readonly retryBaseMs: number
  /** Longest single wait, `retry-after` included, in milliseconds. */
  readonly maxRetryWaitMs: number
}

/** Codes worth another attempt: the server was busy or down, or the connection failed. */
export const RETRIED_CODES: ReadonlySet<LlmErrorCode> = new Set(['RATE_LIMITED', 'SERVER', 'NETWORK'])

/**
 * Runs `attempt` and retries it while it fails with a {@link RETRIED_CODES} error, at most
 * `policy.maxRetries` times. Each wait honours the error's `retryAfterSeconds` (else an
 * exponential backoff with jitter) and is capped at `maxRetryWaitMs`. `toLlmError` maps every
 * failure; the last one is thrown. An abort during a wait rejects with what `toLlmError`
 * makes of the abort.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  toLlmError: (error: unknown) => LlmError,
  signal?: AbortSignal,
): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt()
    } catch (error) {
      const mapped = toLlmError(error)
      if (!RETRIED_CODES.has(mapped.code) || retry >= policy.maxRetries || signal?.aborted) throw mapped
      try {
        await sleep(retryDelayMs(retry, policy, mapped.retryAfterSeconds), signal)
      } catch (abort) {
        throw toLlmError(abort)
      }
    }
  }
}

/**
 * The wait before retry `retry` (0-based): the server's `retry-after` when given, else
 * `retryBaseMs × 2^retry` minus up to 25 % jitter; never more than `maxRetryWaitMs`.
 */
export function retryDelayMs(retry: number, policy: RetryPolicy, retryAfterSeconds?: number): number {
  if (retryAfterSeconds !== undefined) return Math.min(retryAfterSeconds * 1000, policy.maxRetryWaitMs)
  const backoff = policy.retryBaseMs * 2 ** retry * (1 - Math.random() * 0.25)
  return Math.min(backoff, policy.maxRetryWaitMs)
}

/** Waits `milliseconds`; rejects with the signal's reason when it aborts first. */
export function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, milliseconds)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

