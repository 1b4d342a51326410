import type { LlmErrorCode } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai'
import { parseRetryAfter } from './retry.ts'

/** What error mapping needs to know about the call. */
export interface ErrorContext {
  /** Provider id, named in every message. */
  readonly provider: string
  /** The endpoint, named in connection errors. */
  readonly baseURL: string
  /** Milliseconds of the timeout, named in timeout errors. */
  readonly timeoutMs: number
  /** Removes secrets (the API key) from text that goes into a message. */
  readonly redact: (text: string) => string
  /** The raw body of a failed HTTP response, looked up by that response's headers object. */
  readonly bodyOf?: (headers: unknown) => string | undefined
}

/** What a server said about a failure. */
export interface ServerMessage {
  readonly message: string
  readonly code?: string
  readonly type?: string
}

/**
 * Messages (case-insensitive) by which OpenAI, DeepSeek, vLLM, llama.cpp and other servers
 * report a prompt that does not fit the context window.
 */
export const CONTEXT_WINDOW_PATTERNS: readonly RegExp[] = [
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
  /exceeds? the available context size/i,
  /exceeds? the context window/i,
  /prompt is too long/i,
  /too many tokens/i,
]

const MAX_MESSAGE_CHARS = 600

/**
 * Maps any failure of a call to an {@link LlmError} whose message names the provider, the HTTP
 * status and the server's message, passed through `context.redact`. SDK errors are never kept
 * as `cause`: their response body and headers may echo the request.
 */
export function mapError(error: unknown, context: ErrorContext): LlmError {
  if (LlmError.isInstance(error)) return error
  const { provider } = context
  if (error instanceof APIUserAbortError || isAbortError(error)) {
    return new LlmError('ABORTED', `${provider}: the request was aborted`, { provider, retryable: false })
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError('TIMEOUT', `${provider}: no response from ${context.baseURL} within ${context.timeoutMs} ms`, { provider })
  }
  if (error instanceof APIConnectionError) {
    const cause = (error as { cause?: unknown }).cause
    const detail = describeCause(cause) ?? error.message
    return new LlmError('NETWORK', context.redact(`${provider}: cannot reach ${context.baseURL}: ${detail}`), { provider })
  }
  if (error instanceof APIError) {
    if (typeof error.status === 'number') {
      return httpError(error.status, error.headers, context.bodyOf?.(error.headers) ?? JSON.stringify({ error: error.error ?? null }), context)
    }
    // An `error` event inside an otherwise successful stream.
    // Redacted before parsing: cutting a long message first could leave part of a secret.
    const server = serverMessage(context.redact(error.error === undefined ? error.message : JSON.stringify({ error: error.error })))
    const code: LlmErrorCode = isContextWindowError(server) ? 'CONTEXT_WINDOW_EXCEEDED' : 'SERVER'
    return new LlmError(code, context.redact(`${provider}: the server reported an error inside the response stream: ${server.message}`), { provider })
  }
  if (error instanceof SyntaxError) {
    // JSON.parse quotes a cut of the input, which could hold part of a secret a server echoed.
    return new LlmError('INVALID_RESPONSE', `${provider}: the response stream carried a chunk that is not valid JSON`, { provider, retryable: false })
  }
  const detail = describeCause(error) ?? String(error)
  return new LlmError('NETWORK', context.redact(`${provider}: the response stream failed: ${detail}`), { provider })
}

/**
 * Maps a failed HTTP response: a 4xx whose message reports a context overflow →
 * `CONTEXT_WINDOW_EXCEEDED`, 429 → `RATE_LIMITED`, 401/403 → `AUTH`, 5xx → `SERVER`, any other
 * status → `INVALID_REQUEST`. `retryAfterSeconds` comes from `retry-after(-ms)`.
 */
export function httpError(status: number, headers: { get(name: string): string | null } | undefined, body: string, context: ErrorContext): LlmError {
  const { provider } = context
  // Redacted before parsing: cutting a long message first could leave part of a secret.
  const server = serverMessage(context.redact(body))
  const retryAfterSeconds = parseRetryAfter(headers)
  const options = { status, provider, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) }
  const say = (what: string) => context.redact(`${provider}: ${what} (HTTP ${status}): ${server.message}`)
  if (status === 429) return new LlmError('RATE_LIMITED', say('rate limited'), options)
  if (status === 401 || status === 403) return new LlmError('AUTH', say('authentication failed'), options)
  if (status >= 500) return new LlmError('SERVER', say('server error'), options)
  if (status >= 400 && isContextWindowError(server)) return new LlmError('CONTEXT_WINDOW_EXCEEDED', say("the prompt exceeds the model's context window"), options)
  return new LlmError('INVALID_REQUEST', say('request rejected'), { ...options, retryable: false })
}

/** Whether a server message reports a prompt that does not fit the context window. */
export function isContextWindowError(server: ServerMessage): boolean {
  if (server.code === 'context_length_exceeded' || server.type === 'exceed_context_size_error') return true
  return CONTEXT_WINDOW_PATTERNS.some((pattern) => pattern.test(server.message))
}

/**
 * Reads the message out of an error body: `{ error: { message, code, type } }` (OpenAI,
 * DeepSeek, llama.cpp, newer vLLM), `{ error: "..." }`, `{ message, code, type }` (older vLLM),
 * `{ detail }` (FastAPI servers), or the text itself. Long messages are cut.
 */
export function serverMessage(body: unknown): ServerMessage {
  let parsed = body
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body)
    } catch {
      return { message: cut(body.trim() || '(empty body)') }
    }
  }
  if (parsed === null || typeof parsed !== 'object') return { message: cut(String(parsed ?? '(empty body)')) }
  const record = parsed as Record<string, unknown>
  const inner = record.error
  if (typeof inner === 'string') return { message: cut(inner) }
  const source = inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>) : record
  const text = source.message ?? source.detail ?? (source === record ? undefined : record.message)
  return {
    message: cut(text === undefined ? JSON.stringify(parsed) : typeof text === 'string' ? text : JSON.stringify(text)),
    ...(source.code === undefined || source.code === null ? {} : { code: String(source.code) }),
    ...(typeof source.type === 'string' ? { type: source.type } : {}),
  }
}

/** Replaces every occurrence of `secret` in `text` (no-op without a secret). */
export function redactor(secret: string | undefined): (text: string) => string {
  if (!secret) return (text) => text
  return (text) => text.split(secret).join('[redacted]')
}

function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError'
}

/** A one-line description of a low-level failure: its message plus the system error code. */
function describeCause(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined
  const inner = (error as { cause?: unknown }).cause
  const code = inner instanceof Error ? (inner as { code?: unknown }).code : undefined
  const innerMessage = inner instanceof Error ? inner.message : undefined
  return [error.message, innerMessage && innerMessage !== error.message ? innerMessage : undefined, typeof code === 'string' ? `(${code})` : undefined]
    .filter(Boolean)
    .join(' ')
}

function cut(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text
}
