import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk'
import type { LlmErrorCode } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import type { AdapterCallContext } from '@warmfold/llm/adapter'
import { codeForHttpError, mappedOrAborted, parseRetryAfter, secretRedactor } from '@warmfold/llm/adapter'

/**
 * Messages (case-insensitive) by which the Messages API, or a gateway that speaks it, reports a
 * prompt that does not fit the context window. Each row quotes the text it was taken from.
 */
export const CONTEXT_WINDOW_PATTERNS: readonly RegExp[] = [
  // Anthropic (400 invalid_request_error): "prompt is too long: N tokens > M maximum" (the body is quoted in
  //   OpenHands/OpenHands#5350, through LiteLLM).
  /prompt is too long/i,
  // Anthropic (400 invalid_request_error): "input length and `max_tokens` exceed context limit: N + M > L, decrease
  //   input length or `max_tokens` and try again" (docker/docker-agent#569, anthropics/claude-code#228).
  /exceed context limit/i,
  // LiteLLM proxy in front of Anthropic: `{"error": {"message": "litellm.ContextWindowExceededError: …",
  //   "type": null, "param": null, "code": "400"}}` (ContextWindowExceededError in litellm/exceptions.py;
  //   BerriAI/litellm#10431).
  /ContextWindowExceededError/,
  // An Anthropic-compatible endpoint in front of another model (a gateway, DeepSeek's or vLLM's Messages API)
  //   passes on OpenAI's wording: "This model's maximum context length is N tokens. …", code
  //   context_length_exceeded (see the OpenAI-compatible adapter's table for the exact texts).
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
]

/**
 * Maps anything the SDK or the stream throws to an {@link LlmError} with `status`, `provider`,
 * `retryable` and `retryAfterSeconds`:
 *
 * | failure | code |
 * |---|---|
 * | 4xx (not 401/403/429) whose message matches {@link CONTEXT_WINDOW_PATTERNS} | `CONTEXT_WINDOW_EXCEEDED` |
 * | 401, 403 | `AUTH` |
 * | 408 | `TIMEOUT` (retryable) |
 * | 429 | `RATE_LIMITED` (retryable) |
 * | 5xx, 529 `overloaded_error` | `SERVER` (retryable) |
 * | other 4xx | `INVALID_REQUEST` |
 * | an `error` event in the stream | by its `error.type`, the same way |
 * | connection failure / timeout / abort | `NETWORK` / `TIMEOUT` / `ABORTED` |
 *
 * Messages name the provider, model, status, error type, request id and the server's message,
 * with the API key scrubbed; the SDK's error (whose body may echo a key) is not attached, and a
 * low-level cause is attached only as a redacted copy when it holds the key.
 */
export function mapError(error: unknown, context: AdapterCallContext): LlmError {
  const settled = mappedOrAborted(error, context, error instanceof APIUserAbortError)
  if (settled) return settled
  const route = `${context.provider}/${context.model}`
  const { provider } = context
  const secrets = secretRedactor(context.secret)
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError('TIMEOUT', `the call to ${route} timed out waiting for the response (timeoutMs)`, {
      provider,
      cause: secrets.error(error.cause),
    })
  }
  if (error instanceof APIConnectionError) {
    return new LlmError('NETWORK', `could not reach ${route}: ${secrets.text(describeCause(error))}`, {
      provider,
      cause: secrets.error(error.cause),
    })
  }
  if (error instanceof APIError) return fromApiError(error, route, context)
  if (error instanceof SyntaxError) {
    return new LlmError(
      'INVALID_RESPONSE',
      `${route} sent a stream event that is not JSON: ${secrets.text(error.message)}`,
      { provider, retryable: false },
    )
  }
  const message = error instanceof Error ? error.message : String(error)
  return new LlmError('NETWORK', `the connection to ${route} failed: ${secrets.text(message)}`, {
    provider,
    cause: secrets.error(error),
  })
}

function fromApiError(error: APIError, route: string, context: AdapterCallContext): LlmError {
  const type = error.type ?? undefined
  const upstream = upstreamMessage(error.error)
  const own = error.apiMessage ?? error.message.replace(/^\d{3} /, '')
  const serverMessage = secretRedactor(context.secret).text(upstream ? `${own} (${upstream})` : own)
  const code =
    error.status === undefined
      ? codeForType(type, serverMessage)
      : codeForHttpError(error.status, isContextWindowMessage(serverMessage))
  const retryAfterSeconds = parseRetryAfter(error.headers ?? undefined)
  const shouldRetry = error.headers?.get('x-should-retry')
  const where = error.status === undefined ? 'sent an error event mid-stream' : `answered HTTP ${error.status}`
  const requestId = error.requestID ? `, request-id ${error.requestID}` : ''
  return new LlmError(
    code,
    `${route} ${where} (${type ?? 'no error type'}${requestId}): ${serverMessage || '(no message)'}`,
    {
      provider: context.provider,
      ...(error.status === undefined ? {} : { status: error.status }),
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      ...(shouldRetry === 'true' || shouldRetry === 'false' ? { retryable: shouldRetry === 'true' } : {}),
    },
  )
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
      return isContextWindowMessage(serverMessage) ? 'CONTEXT_WINDOW_EXCEEDED' : 'INVALID_REQUEST'
    case undefined:
      return 'SERVER'
    default:
      // billing_error, not_found_error, request_too_large and other client-side types.
      return type.endsWith('_error') || type === 'request_too_large' ? 'INVALID_REQUEST' : 'SERVER'
  }
}

/** Whether a server message reports a prompt over the context window ({@link CONTEXT_WINDOW_PATTERNS}). */
export function isContextWindowMessage(serverMessage: string): boolean {
  return CONTEXT_WINDOW_PATTERNS.some((pattern) => pattern.test(serverMessage))
}

/**
 * The upstream provider's message when a router wrapped it: OpenRouter answers
 * `{ error: { message: "Provider returned error", metadata: { provider_name, raw } } }`, where
 * `raw` is the upstream body as a string (https://openrouter.ai/docs/api/reference/errors-and-debugging).
 */
function upstreamMessage(body: unknown): string | undefined {
  const metadata = (body as { error?: { metadata?: { raw?: unknown; provider_name?: unknown } } } | undefined)?.error
    ?.metadata
  if (typeof metadata?.raw !== 'string' || metadata.raw.trim() === '') return undefined
  let text = metadata.raw
  try {
    const parsed = JSON.parse(metadata.raw) as { error?: { message?: unknown } | string; message?: unknown }
    const inner = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message)
    if (typeof inner === 'string') text = inner
  } catch {
    // Not JSON: the raw text is the message.
  }
  return typeof metadata.provider_name === 'string' ? `${metadata.provider_name}: ${text}` : text
}

function describeCause(error: APIConnectionError): string {
  const cause = error.cause as
    | { message?: unknown; code?: unknown; cause?: { code?: unknown; message?: unknown } }
    | undefined
  const inner = cause?.cause
  const detail = [cause?.message, inner?.code ?? inner?.message].filter(
    (part) => typeof part === 'string' && part !== '',
  )
  return detail.length ? detail.join(': ') : error.message
}
