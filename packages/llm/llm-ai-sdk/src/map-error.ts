import { APICallError } from '@ai-sdk/provider'
import type { LlmErrorCode } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import type { AdapterCallContext } from '@warmfold/llm/adapter'
import {
  codeForHttpError,
  codeForHttpStatus,
  describeConnectionFailure,
  mappedOrAborted,
  parseRetryAfter,
  secretRedactor,
} from '@warmfold/llm/adapter'

/**
 * Messages (case-insensitive) by which OpenAI-style and Anthropic-style servers report a prompt
 * over the context window; the same wordings the direct adapters recognise.
 */
export const CONTEXT_WINDOW_PATTERNS: readonly RegExp[] = [
  // Anthropic: "prompt is too long: N tokens > M maximum".
  /prompt is too long/i,
  // Anthropic: "input length and `max_tokens` exceed context limit: …".
  /exceed context limit/i,
  // LiteLLM: "litellm.ContextWindowExceededError: …".
  /ContextWindowExceededError/,
  // OpenAI: "This model's maximum context length is N tokens. …", code context_length_exceeded.
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
  // vLLM / llama.cpp: "… exceeds the available context size" / "the request exceeds the available context size".
  /exceeds? the (available )?context (size|window)/i,
]

/**
 * Maps anything `doStream` or its stream throws to an {@link LlmError}:
 *
 * | failure | code |
 * |---|---|
 * | `APICallError` 4xx (not 401/403/429) whose message matches {@link CONTEXT_WINDOW_PATTERNS} |
 * `CONTEXT_WINDOW_EXCEEDED` |
 * | `APICallError` 401, 403 | `AUTH` |
 * | `APICallError` 408 | `TIMEOUT` (retryable) |
 * | `APICallError` 429 | `RATE_LIMITED` (retryable, `retry-after` honoured) |
 * | `APICallError` 5xx (529 included) | `SERVER` (retryable) |
 * | other `APICallError` 4xx | `INVALID_REQUEST` |
 * | `APICallError` without status (the connection failed) | `NETWORK` |
 * | the connection lost after the headers (a reset, the server closing the socket mid-stream: `APICallError` 200
 * "Failed to process successful response" over `terminated` / `UND_ERR_SOCKET`) | `NETWORK` (retryable) |
 * | an `error` stream part (an error event mid-stream) | by its `type` as Anthropic and OpenAI name them |
 * | abort | `ABORTED` |
 *
 * `retryable` is the provider's `isRetryable` where it says, else the code's default. The message
 * names provider, model, status and the server's message, with the `redact` secrets scrubbed; the
 * `APICallError` itself (whose `requestBodyValues` hold the whole prompt) is not attached.
 */
export function mapError(error: unknown, context: AdapterCallContext): LlmError {
  const settled = mappedOrAborted(error, context)
  if (settled) return settled
  const route = `${context.provider}/${context.model}`
  const { provider } = context
  const redactor = secretRedactor(context.secret)
  if (APICallError.isInstance(error)) return fromApiCallError(error, route, context)
  if (
    error instanceof Error &&
    (error.name === 'AI_JSONParseError' ||
      error.name === 'AI_TypeValidationError' ||
      error.name === 'AI_InvalidResponseDataError')
  ) {
    return new LlmError(
      'INVALID_RESPONSE',
      `${route} sent a response the provider could not read: ${redactor.text(error.message)}`,
      { provider, retryable: false },
    )
  }
  const lost = describeConnectionFailure(error)
  if (lost !== undefined)
    return new LlmError('NETWORK', `the connection to ${route} failed: ${redactor.text(lost)}`, {
      provider,
      cause: redactor.error(error),
    })
  if (isStreamErrorObject(error)) return fromStreamError(error, route, context)
  const message = error instanceof Error ? error.message : String(error)
  return new LlmError('NETWORK', `the call to ${route} failed: ${redactor.text(message)}`, {
    provider,
    cause: redactor.error(error),
  })
}

function fromApiCallError(error: APICallError, route: string, context: AdapterCallContext): LlmError {
  const { provider } = context
  const redactor = secretRedactor(context.secret)
  const serverMessage = redactor.text(error.message)
  if (error.statusCode === undefined) {
    return new LlmError('NETWORK', `could not reach ${route}: ${serverMessage}`, {
      provider,
      cause: redactor.error(error.cause),
    })
  }
  // The provider wraps a socket closed or reset while it read a successful response in an
  // APICallError carrying that response's status: a transport failure, not a bad response.
  const lost = error.statusCode < 400 ? describeConnectionFailure(error) : undefined
  if (lost !== undefined) {
    return new LlmError(
      'NETWORK',
      `the connection to ${route} was lost mid-response (HTTP ${error.statusCode}): ${redactor.text(lost)}`,
      {
        provider,
        cause: redactor.error(error.cause),
      },
    )
  }
  const code = codeForHttpError(error.statusCode, isContextWindowMessage(serverMessage))
  const headers = error.responseHeaders
  const retryAfterSeconds = parseRetryAfter(
    headers ? { get: (name) => headers[name.toLowerCase()] ?? null } : undefined,
  )
  return new LlmError(code, `${route} answered HTTP ${error.statusCode}: ${serverMessage || '(no message)'}`, {
    provider,
    status: error.statusCode,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    // The provider's judgement (it reads x-should-retry and its status table), except where the code says otherwise.
    retryable:
      code === 'AUTH' || code === 'INVALID_REQUEST' || code === 'CONTEXT_WINDOW_EXCEEDED' ? false : error.isRetryable,
  })
}

/** Whether a server message reports a prompt over the context window. */
export function isContextWindowMessage(serverMessage: string): boolean {
  return CONTEXT_WINDOW_PATTERNS.some((pattern) => pattern.test(serverMessage))
}

interface StreamErrorObject {
  readonly type?: unknown
  readonly message?: unknown
  readonly code?: unknown
}

function isStreamErrorObject(error: unknown): error is StreamErrorObject {
  return (
    typeof error === 'object' && error !== null && !(error instanceof Error) && ('message' in error || 'type' in error)
  )
}

/**
 * An `error` stream part: the provider forwards the error object of the event as it came
 * (Anthropic `{ type, message }`, chat completions `{ message, type, code }`).
 */
function fromStreamError(error: StreamErrorObject, route: string, context: AdapterCallContext): LlmError {
  const type = typeof error.type === 'string' ? error.type : typeof error.code === 'string' ? error.code : undefined
  const message = secretRedactor(context.secret).text(
    typeof error.message === 'string' ? error.message : JSON.stringify(error),
  )
  // OpenRouter reports a failure after the stream began as `{ code: 429, message }`, vLLM as `code:
  // 400`: an HTTP status, read like one.
  const status =
    typeof error.code === 'number' || (typeof error.code === 'string' && /^\d{3}$/.test(error.code))
      ? Number(error.code)
      : undefined
  const code =
    status !== undefined && status >= 400 && !isContextWindowMessage(message)
      ? (codeForHttpStatus(status) ?? 'INVALID_REQUEST')
      : codeForType(type, message)
  return new LlmError(
    code,
    `${route} sent an error event mid-stream ` +
      `(${type ?? (status === undefined ? 'no error type' : `code ${status}`)}): ${message || '(no message)'}`,
    { provider: context.provider },
  )
}

/** The code of a stream error event's type. */
export function codeForType(type: string | undefined, message: string): LlmErrorCode {
  switch (type) {
    case 'overloaded_error':
    case 'api_error':
    case 'server_error':
    case undefined:
      return isContextWindowMessage(message) ? 'CONTEXT_WINDOW_EXCEEDED' : 'SERVER'
    case 'rate_limit_error':
    case 'rate_limit_exceeded':
      return 'RATE_LIMITED'
    case 'authentication_error':
    case 'permission_error':
      return 'AUTH'
    case 'timeout_error':
      return 'TIMEOUT'
    default:
      return isContextWindowMessage(message) ? 'CONTEXT_WINDOW_EXCEEDED' : 'INVALID_REQUEST'
  }
}
