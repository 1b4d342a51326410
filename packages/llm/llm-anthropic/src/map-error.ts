import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk'
import type { LlmErrorCode } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'

/** What an error message may name about the failed call. */
export interface ErrorContext {
  /** Provider id the call was routed to. */
  readonly provider: string
  /** Model id of the call. */
  readonly model: string
  /** The call's signal: an error after it aborted is always `ABORTED`. */
  readonly signal?: AbortSignal
  /** The API key, scrubbed from every server message that would echo it. */
  readonly secret?: string
}

/** Anthropic's wording for a prompt over the context window (a 400 `invalid_request_error`). */
export const PROMPT_TOO_LONG = /prompt is too long/i

/**
 * Maps anything the SDK or the stream throws to an {@link LlmError} with `status`, `provider`,
 * `retryable` and `retryAfterSeconds`:
 *
 * | failure | code |
 * |---|---|
 * | 400 whose message says "prompt is too long" | `CONTEXT_WINDOW_EXCEEDED` |
 * | 401, 403 | `AUTH` |
 * | 429 | `RATE_LIMITED` (retryable) |
 * | 5xx, 529 `overloaded_error` | `SERVER` (retryable) |
 * | other 4xx | `INVALID_REQUEST` |
 * | an `error` event in the stream | by its `error.type`, the same way |
 * | connection failure / timeout / abort | `NETWORK` / `TIMEOUT` / `ABORTED` |
 *
 * Messages name the provider, model, status, error type, request id and the server's message,
 * with the API key scrubbed; the SDK's error (whose body may echo a key) is not attached.
 */
export function mapError(error: unknown, context: ErrorContext): LlmError {
  if (LlmError.isInstance(error)) return error
  const route = `${context.provider}/${context.model}`
  const { provider } = context
  if (context.signal?.aborted || error instanceof APIUserAbortError || (error instanceof Error && error.name === 'AbortError')) {
    return new LlmError('ABORTED', `the call to ${route} was aborted`, { provider, retryable: false, cause: context.signal?.reason ?? error })
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError('TIMEOUT', `the call to ${route} timed out waiting for the response`, { provider, cause: error.cause })
  }
  if (error instanceof APIConnectionError) {
    return new LlmError('NETWORK', `could not reach ${route}: ${redact(describeCause(error), context.secret)}`, { provider, cause: error.cause })
  }
  if (error instanceof APIError) return fromApiError(error, route, context)
  if (error instanceof SyntaxError) {
    return new LlmError('INVALID_RESPONSE', `${route} sent a stream event that is not JSON: ${redact(error.message, context.secret)}`, { provider, retryable: false })
  }
  const message = error instanceof Error ? error.message : String(error)
  return new LlmError('NETWORK', `the connection to ${route} failed: ${redact(message, context.secret)}`, { provider, cause: error })
}

function fromApiError(error: APIError, route: string, context: ErrorContext): LlmError {
  const type = error.type ?? undefined
  const serverMessage = redact(error.apiMessage ?? stripStatus(error.message), context.secret)
  const code = error.status === undefined ? codeForType(type, serverMessage) : codeForStatus(error.status, serverMessage)
  const retryAfterSeconds = parseRetryAfter(error.headers ?? undefined)
  const shouldRetry = error.headers?.get('x-should-retry')
  const where = error.status === undefined ? 'sent an error event mid-stream' : `answered HTTP ${error.status}`
  const requestId = error.requestID ? `, request-id ${error.requestID}` : ''
  return new LlmError(code, `${route} ${where} (${type ?? 'no error type'}${requestId}): ${serverMessage || '(no message)'}`, {
    provider: context.provider,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    ...(shouldRetry === 'true' || shouldRetry === 'false' ? { retryable: shouldRetry === 'true' } : {}),
  })
}

/** The code of an HTTP error status. */
export function codeForStatus(status: number, serverMessage: string): LlmErrorCode {
  if (status === 400 && PROMPT_TOO_LONG.test(serverMessage)) return 'CONTEXT_WINDOW_EXCEEDED'
  if (status === 401 || status === 403) return 'AUTH'
  if (status === 429) return 'RATE_LIMITED'
  if (status >= 500) return 'SERVER'
  if (status >= 400) return 'INVALID_REQUEST'
  return 'INVALID_RESPONSE'
}

/** The code of a stream `error` event, from its `error.type`. */
export function codeForType(type: string | undefined, serverMessage: string): LlmErrorCode {
  switch (type) {
    case 'overloaded_error':
    case 'api_error':
      return 'SERVER'
    case 'rate_limit_error':
      return 'RATE_LIMITED'
    case 'authentication_error':
    case 'permission_error':
      return 'AUTH'
    case 'timeout_error':
      return 'TIMEOUT'
    case 'invalid_request_error':
      return PROMPT_TOO_LONG.test(serverMessage) ? 'CONTEXT_WINDOW_EXCEEDED' : 'INVALID_REQUEST'
    case undefined:
      return 'SERVER'
    default:
      // billing_error, not_found_error, request_too_large and other client-side types.
      return type.endsWith('_error') || type === 'request_too_large' ? 'INVALID_REQUEST' : 'SERVER'
  }
}

/**
 * Seconds to wait from a `retry-after-ms` or `retry-after` header (delta-seconds or an HTTP
 * date), or `undefined` when there is none or it cannot be read.
 */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  const milliseconds = Number(headers?.get('retry-after-ms') ?? Number.NaN)
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds / 1000
  const value = headers?.get('retry-after')?.trim()
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds : undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000)
}

/** Replaces every occurrence of `secret` in `text`. */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('[redacted]') : text
}

function stripStatus(message: string): string {
  return message.replace(/^\d{3} /, '')
}

function describeCause(error: APIConnectionError): string {
  const cause = error.cause as { message?: unknown; code?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined
  const inner = cause?.cause
  const detail = [cause?.message, inner?.code ?? inner?.message].filter((part) => typeof part === 'string' && part !== '')
  return detail.length ? detail.join(': ') : error.message
}
