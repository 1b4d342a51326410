import { setTimeout as delay } from 'node:timers/promises'
import type { LlmError, LlmErrorCode } from '@warmfold/llm'
import { nextRetry } from '@warmfold/llm/adapter'
import type { OpenAICompatibleConfig } from './config.ts'

/**
 * Codes worth another attempt: the server was busy or down, or the connection failed. A `TIMEOUT`
 * is retried too when the server answered it (HTTP 408: it gave up waiting for the request), not
 * when the adapter's own `timeoutMs` ran out.
 */
export const RETRIED_CODES: ReadonlySet<LlmErrorCode> = new Set(['RATE_LIMITED', 'SERVER', 'NETWORK'])

function retried(error: LlmError): boolean {
  return RETRIED_CODES.has(error.code) || (error.code === 'TIMEOUT' && error.status !== undefined)
}

/**
 * Runs `attempt` and retries it while it fails with a {@link RETRIED_CODES} error (or a 408), at most
 * `policy.maxRetries` times. Each wait is what `nextRetry` of `@warmfold/llm` decides for every
 * adapter: the error's `retryAfterSeconds`, else `retryBaseMs × 2ⁿ`, never more than
 * `maxRetryWaitMs` and never past `remainingMs()` (the time left before `deadlineMs`); a wait it
 * will not make ends the retries, and that error is thrown (a `RATE_LIMITED` keeps its
 * `retryAfterSeconds`, so the host can schedule the retry). `toLlmError` maps every failure; an
 * abort during a wait rejects with what `toLlmError` makes of the abort.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: Pick<OpenAICompatibleConfig, 'maxRetries' | 'retryBaseMs' | 'maxRetryWaitMs'>,
  toLlmError: (error: unknown) => LlmError,
  signal?: AbortSignal,
  remainingMs?: () => number,
): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt()
    } catch (error) {
      const mapped = toLlmError(error)
      if (!retried(mapped) || signal?.aborted) throw mapped
      const step = nextRetry(retry, mapped, { ...policy, maxWaitMs: policy.maxRetryWaitMs, remainingMs })
      if ('error' in step) throw step.error
      try {
        await delay(step.waitMs, undefined, { signal })
      } catch (abort) {
        throw toLlmError(abort)
      }
    }
  }
}
