import type { LlmErrorCode } from './llm-error.ts'

/**
 * The code of an HTTP error status whose meaning does not depend on the body, the same in every
 * adapter: 401 and 403 `AUTH`; 408 `TIMEOUT` (the server gave up waiting for the request; the
 * OpenAI, Anthropic and Google SDKs all retry it); 429 `RATE_LIMITED`; 5xx `SERVER`. `undefined`
 * for any other status: the adapter reads the body then (a context overflow, an invalid request).
 */
export function codeForHttpStatus(status: number): LlmErrorCode | undefined {
  if (status === 401 || status === 403) return 'AUTH'
  if (status === 408) return 'TIMEOUT'
  if (status === 429) return 'RATE_LIMITED'
  if (status >= 500) return 'SERVER'
  return undefined
}

/**
 * The code of an HTTP error response: {@link codeForHttpStatus}, else `CONTEXT_WINDOW_EXCEEDED`
 * for a 4xx whose body reports a prompt over the window (`contextWindow`), `INVALID_REQUEST` for
 * any other 4xx, and `INVALID_RESPONSE` below 400.
 */
export function codeForHttpError(status: number, contextWindow: boolean): LlmErrorCode {
  const byStatus = codeForHttpStatus(status)
  if (byStatus) return byStatus
  if (status < 400) return 'INVALID_RESPONSE'
  return contextWindow ? 'CONTEXT_WINDOW_EXCEEDED' : 'INVALID_REQUEST'
}
