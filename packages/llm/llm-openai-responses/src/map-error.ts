import type { LlmErrorCode } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import type { AdapterCallContext } from '@warmfold/llm/adapter'
import { codeForHttpError, mappedOrAborted, parseRetryAfter, secretRedactor } from '@warmfold/llm/adapter'
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai'

/**
 * Messages (case-insensitive) by which OpenAI reports a prompt over the context window; the
 * structured signal is `code: "context_length_exceeded"` (checked first).
 */
export const CONTEXT_WINDOW_PATTERNS: readonly RegExp[] = [
  // Responses-era models (400, code context_length_exceeded): "Your input exceeds the context window of this
  //   model. Please adjust your input and try again." (anomalyco/opencode#6071).
  /exceeds? the context window/i,
  // Older models: "This model's maximum context length is N tokens. However, your messages resulted in M tokens."
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
  // GPT-5 through OpenAI / Azure: "Input tokens exceed the configured limit of 272000 tokens." (BerriAI/litellm#15968).
  /input tokens exceed the configured limit/i,
]

/**
 * Maps anything the SDK or the stream throws to an {@link LlmError}:
 *
 * | failure | code |
 * |---|---|
 * | 4xx with code `context_length_exceeded` or a message in {@link CONTEXT_WINDOW_PATTERNS} |
 * `CONTEXT_WINDOW_EXCEEDED` |
 * | 401, 403 | `AUTH` |
 * | 408 | `TIMEOUT` (retryable) |
 * | 429 | `RATE_LIMITED` (retryable, `retryAfterSeconds` from `retry-after(-ms)`) |
 * | 5xx | `SERVER` (retryable) |
 * | other 4xx | `INVALID_REQUEST` |
 * | connection failure / timeout / abort | `NETWORK` / `TIMEOUT` / `ABORTED` |
 *
 * Messages name the provider, model, status, error code and the server's message with the API
 * key scrubbed; the SDK's error (whose body may echo the request) is never attached.
 */
export function mapError(error: unknown, context: AdapterCallContext): LlmError {
  const settled = mappedOrAborted(error, context, error instanceof APIUserAbortError)
  if (settled) return settled
  const route = `${context.provider}/${context.model}`
  const { provider } = context
  const secrets = secretRedactor(context.secret)
  if (error instanceof APIConnectionTimeoutError)
    return new LlmError('TIMEOUT', `the call to ${route} timed out waiting for the response (timeoutMs)`, { provider })
  if (error instanceof APIConnectionError) {
    const cause = (error as { cause?: { message?: unknown; cause?: { code?: unknown } } }).cause
    const detail =
      [cause?.message, cause?.cause?.code].filter((part) => typeof part === 'string' && part !== '').join(': ') ||
      error.message
    return new LlmError('NETWORK', `could not reach ${route}: ${secrets.text(detail)}`, { provider })
  }
  if (error instanceof APIError) {
    const body = (error.error ?? {}) as { message?: unknown; code?: unknown; type?: unknown }
    const serverMessage = secrets.text(
      typeof body.message === 'string' ? body.message : error.message.replace(/^\d{3} /, ''),
    )
    const errorCode = typeof body.code === 'string' ? body.code : typeof body.type === 'string' ? body.type : undefined
    if (error.status === undefined) return streamError(errorCode, serverMessage, context)
    const code = codeForHttpError(error.status, isContextWindowError(errorCode, serverMessage))
    const retryAfterSeconds = parseRetryAfter(error.headers ?? undefined)
    const requestId = error.requestID ? `, request-id ${error.requestID}` : ''
    return new LlmError(
      code,
      `${route} answered HTTP ${error.status} (${errorCode ?? 'no error code'}${requestId}): ` +
        `${serverMessage || '(no message)'}`,
      {
        provider,
        status: error.status,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      },
    )
  }
  if (error instanceof SyntaxError) {
    // JSON.parse quotes a cut of the input, which could hold part of a secret a server echoed.
    return new LlmError('INVALID_RESPONSE', `${route} sent a stream event that is not JSON`, {
      provider,
      retryable: false,
    })
  }
  const message = error instanceof Error ? error.message : String(error)
  return new LlmError('NETWORK', `the connection to ${route} failed: ${secrets.text(message)}`, {
    provider,
    cause: secrets.error(error),
  })
}

/**
 * The error of an `error` event or a `response.failed` event: by its `code`
 * (`rate_limit_exceeded` → `RATE_LIMITED`, `server_error` or none → `SERVER`,
 * `context_length_exceeded` → `CONTEXT_WINDOW_EXCEEDED`, anything else `INVALID_REQUEST`).
 */
export function streamError(
  errorCode: string | undefined,
  serverMessage: string,
  context: AdapterCallContext,
  what = 'sent an error event mid-stream',
): LlmError {
  const message = secretRedactor(context.secret).text(serverMessage)
  return new LlmError(
    codeForStreamError(errorCode, message),
    `${context.provider}/${context.model} ${what} (${errorCode ?? 'no error code'}): ${message || '(no message)'}`,
    {
      provider: context.provider,
    },
  )
}

function codeForStreamError(errorCode: string | undefined, serverMessage: string): LlmErrorCode {
  if (isContextWindowError(errorCode, serverMessage)) return 'CONTEXT_WINDOW_EXCEEDED'
  switch (errorCode) {
    case undefined:
    case 'server_error':
    case 'server_is_overloaded':
    case 'api_error':
      return 'SERVER'
    case 'rate_limit_exceeded':
    case 'rate_limit_error':
      return 'RATE_LIMITED'
    case 'invalid_api_key':
    case 'authentication_error':
      return 'AUTH'
    default:
      return 'INVALID_REQUEST'
  }
}

/** Whether an error reports a prompt over the context window. */
export function isContextWindowError(errorCode: string | undefined, serverMessage: string): boolean {
  return (
    errorCode === 'context_length_exceeded' || CONTEXT_WINDOW_PATTERNS.some((pattern) => pattern.test(serverMessage))
  )
}
