import { ApiError } from '@google/genai'
import type { LlmErrorCode } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import type { AdapterCallContext } from '@warmfold/llm/adapter'
import {
  codeForHttpStatus,
  describeConnectionFailure,
  mappedOrAborted,
  parseRetryAfter,
  secretRedactor,
} from '@warmfold/llm/adapter'

/** What an error message may name about the failed call. */
export interface ErrorContext extends AdapterCallContext {
  /**
   * Headers of the attempt's HTTP response, when one arrived. The SDK's `ApiError` keeps only the
   * status and body, so the adapter's fetch wrapper records them for `retry-after`.
   */
  readonly headers?: () => { get(name: string): string | null } | undefined
}

/** Gemini's error body: `{ error: { code, message, status, details } }` (google.rpc.Status). */
export interface GeminiErrorBody {
  readonly code?: number
  readonly message?: string
  readonly status?: string
  readonly details?: ReadonlyArray<{ readonly '@type'?: string; readonly [field: string]: unknown }>
}

/**
 * Messages (case-insensitive) by which the API reports a prompt over the context window; each
 * row quotes the text it was taken from.
 */
export const CONTEXT_WINDOW_PATTERNS: readonly RegExp[] = [
  // Gemini API (400 INVALID_ARGUMENT): "The input token count (3475108) exceeds the maximum number of tokens allowed
  //   (1048576)." (google-gemini/gemini-cli#4231, #6678, #12098).
  /input token count.*exceeds the maximum number of tokens/i,
  // A gateway in front of Gemini that passes on OpenAI's wording.
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
]

/**
 * `google.rpc.Status.status` strings and the code each maps to
 * (https://ai.google.dev/gemini-api/docs/troubleshooting).
 */
export const STATUS_CODES: { readonly [status: string]: LlmErrorCode } = {
  RESOURCE_EXHAUSTED: 'RATE_LIMITED',
  UNAUTHENTICATED: 'AUTH',
  PERMISSION_DENIED: 'AUTH',
  INVALID_ARGUMENT: 'INVALID_REQUEST',
  FAILED_PRECONDITION: 'INVALID_REQUEST',
  NOT_FOUND: 'INVALID_REQUEST',
  INTERNAL: 'SERVER',
  UNAVAILABLE: 'SERVER',
  DEADLINE_EXCEEDED: 'SERVER',
}

/**
 * Maps anything the SDK or the stream throws to an {@link LlmError}:
 *
 * | failure | code |
 * |---|---|
 * | 400 whose message matches {@link CONTEXT_WINDOW_PATTERNS} | `CONTEXT_WINDOW_EXCEEDED` |
 * | 401, 403, or 400 with `ErrorInfo.reason` `API_KEY_INVALID` | `AUTH` |
 * | 408 | `TIMEOUT` (retryable) |
 * | 429 `RESOURCE_EXHAUSTED` | `RATE_LIMITED` (retryable) |
 * | 5xx (`INTERNAL`, `UNAVAILABLE`, `DEADLINE_EXCEEDED`) | `SERVER` (retryable) |
 * | other 4xx | `INVALID_REQUEST` |
 * | an error object in the stream | by its `code`/`status`, the same way |
 * | the connection failing or lost mid-response (refused, reset, closed: `terminated`) | `NETWORK` |
 * | the body ending cleanly inside an event | `STREAM_INCOMPLETE` |
 * | abort | `ABORTED` |
 *
 * `retryAfterSeconds` comes from the `retry-after` header, else from `RetryInfo.retryDelay` in the
 * error details. Messages name the provider, model, status and the server's message, with the API
 * key scrubbed; the SDK's error (whose message is the raw body) is not attached.
 */
export function mapError(error: unknown, context: ErrorContext): LlmError {
  const settled = mappedOrAborted(error, context)
  if (settled) return settled
  const route = `${context.provider}/${context.model}`
  const { provider } = context
  const secrets = secretRedactor(context.secret)
  if (error instanceof ApiError) return fromApiError(error, route, context)
  const message = error instanceof Error ? error.message : String(error)
  if (message === 'Incomplete JSON segment at the end') {
    // The SDK's words for a body that ended cleanly inside an event.
    return new LlmError(
      'STREAM_INCOMPLETE',
      `the stream from ${route} was cut off mid-response (${message}); the reply is incomplete`,
      { provider, retryable: true, cause: secrets.error(error) },
    )
  }
  // A socket closed or reset mid-body (undici's `terminated`) is a transport failure, as in every adapter.
  const lost = describeConnectionFailure(error)
  if (lost !== undefined)
    return new LlmError('NETWORK', `the connection to ${route} failed: ${secrets.text(lost)}`, {
      provider,
      cause: secrets.error(error),
    })
  if (error instanceof SyntaxError || message.startsWith('exception parsing stream chunk')) {
    return new LlmError('INVALID_RESPONSE', `${route} sent a stream chunk that is not JSON: ${secrets.text(message)}`, {
      provider,
      retryable: false,
    })
  }
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
  const detail = [message, cause?.code ?? cause?.message]
    .filter((part) => typeof part === 'string' && part !== '')
    .join(': ')
  return new LlmError('NETWORK', `the connection to ${route} failed: ${secrets.text(detail)}`, {
    provider,
    cause: secrets.error(error),
  })
}

/**
 * The `error` object inside an `ApiError`'s message (the SDK puts the raw body there, after `got
 * status: X. ` mid-stream).
 */
export function errorBodyOf(message: string): GeminiErrorBody | undefined {
  const starts = [message.indexOf('{'), message.indexOf('[')].filter((index) => index >= 0)
  if (starts.length === 0) return undefined
  const start = Math.min(...starts)
  try {
    const parsed = JSON.parse(message.slice(start)) as { error?: unknown } | Array<{ error?: unknown }>
    // Some Google front ends wrap the body in a one-element array.
    const body = Array.isArray(parsed) ? parsed[0]?.error : parsed.error
    return typeof body === 'object' && body !== null ? (body as GeminiErrorBody) : undefined
  } catch {
    return undefined
  }
}

/**
 * Seconds of `RetryInfo.retryDelay` (a protobuf Duration string such as `"33s"` or `"1.5s"`),
 * if the details carry one.
 */
export function retryDelaySeconds(body: GeminiErrorBody | undefined): number | undefined {
  for (const detail of body?.details ?? []) {
    if (!detail['@type']?.endsWith('google.rpc.RetryInfo')) continue
    const match = typeof detail.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay.trim()) : null
    if (match) return Number(match[1])
  }
  return undefined
}

function fromApiError(error: ApiError, route: string, context: ErrorContext): LlmError {
  const secrets = secretRedactor(context.secret)
  const body = errorBodyOf(error.message)
  const midStream = error.message.startsWith('got status:')
  const serverMessage = secrets.text(body?.message ?? error.message)
  const code = codeFor(error.status, body, serverMessage)
  const headers = midStream ? undefined : context.headers?.()
  const retryAfterSeconds = parseRetryAfter(headers) ?? retryDelaySeconds(body)
  const where = midStream ? `sent an error mid-stream (${error.status})` : `answered HTTP ${error.status}`
  return new LlmError(code, `${route} ${where} (${body?.status ?? 'no status'}): ${serverMessage || '(no message)'}`, {
    provider: context.provider,
    status: error.status,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  })
}

/** The code of an API error, from its HTTP status, its `status` string and its message. */
export function codeFor(status: number, body: GeminiErrorBody | undefined, serverMessage: string): LlmErrorCode {
  const reasons = (body?.details ?? []).map((detail) => detail.reason)
  if (reasons.includes('API_KEY_INVALID')) return 'AUTH'
  const byStatus = codeForHttpStatus(status)
  if (byStatus) return byStatus
  if (status >= 400 && CONTEXT_WINDOW_PATTERNS.some((pattern) => pattern.test(serverMessage)))
    return 'CONTEXT_WINDOW_EXCEEDED'
  const byRpcStatus = body?.status === undefined ? undefined : STATUS_CODES[body.status]
  if (byRpcStatus) return byRpcStatus
  return status >= 400 ? 'INVALID_REQUEST' : 'SERVER'
}
