import type { LlmErrorCode } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import { codeForHttpStatus, parseRetryAfter } from '@warmfold/llm/adapter'
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai'

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
  /** What the upstream provider said, when a router wrapped it (OpenRouter's `error.metadata.raw`). */
  readonly upstream?: ServerMessage
}

/**
 * Messages (case-insensitive) by which servers report a prompt that does not fit the context
 * window. Each row quotes the exact text it was taken from; `N`, `M`, … are numbers.
 *
 * Two structured signals are checked besides (see {@link isContextWindowError}): OpenAI's
 * `code: "context_length_exceeded"` and llama.cpp's `type: "exceed_context_size_error"`.
 */
export const CONTEXT_WINDOW_PATTERNS: readonly RegExp[] = [
  // OpenAI (400, code context_length_exceeded): "This model's maximum context length is N tokens. However, your
  //   messages resulted in M tokens. Please reduce the length of the messages." (as quoted in
  //   dimagi/open-chat-studio#463).
  // DeepSeek (400, type and code invalid_request_error): "This model's maximum context length is 131072 tokens.
  //   However, you requested N tokens (P in the messages, C in the completion). Please reduce the length of the
  //   messages or completion." (NoFxAiOS/nofx#1278, FoundationAgents/OpenManus#79).
  // vLLM V0 (400, type BadRequestError): the same DeepSeek wording, raised by `_validate_prompt_and_tokenize` in
  //   vllm/entrypoints/openai/serving_engine.py.
  // vLLM (newer): "This model's maximum context length is N tokens. However, your request has M input tokens.
  //   Please reduce the length of the input messages." (`_create_tokens_prompt`, vllm/entrypoints/renderer.py),
  //   and "'max_tokens' or 'max_completion_tokens' is too large: C. This model's maximum context length is N
  //   tokens and your request has M input tokens (C > N - M)."
  // SGLang (400, type BadRequestError): "Requested token count exceeds the model's maximum context length of N
  //   tokens. You requested a total of T tokens: …" (`_validate_one_request`,
  //   python/sglang/srt/managers/tokenizer_manager.py).
  // OpenRouter (400): "This endpoint's maximum context length is N tokens. However, you requested about M tokens
  //   (…). Please reduce the length of either one, or use the "middle-out" transform …" (refly-ai/refly#1177).
  /maximum context length/i,
  // OpenAI's error code, also when it only appears in a message a proxy passed on.
  /context[_ ]length[_ ]exceeded/i,
  // SGLang (400): "The input (N tokens) is longer than the model's context length (M tokens)."
  //   (`_validate_one_request`, python/sglang/srt/managers/tokenizer_manager.py; Together AI sends the same).
  /is longer than the model's context length/i,
  // vLLM V1 (400, or an error event inside the stream): "The decoder prompt (length N) is longer than the maximum
  //   model length of M. Make sure that `max_model_len` is no smaller than the number of text tokens."
  //   (`_validate_model_input`, vllm/v1/engine/processor.py).
  /is longer than the maximum model length/i,
  // llama.cpp (400, type exceed_context_size_error): "request (N tokens) exceeds the available context size
  //   (M tokens), try increasing it" (tools/server/server-context.cpp); older builds: "the request exceeds the
  //   available context size, try increasing it" (checked by tools/server/tests/unit/test_ctx_shift.py).
  /exceeds? the available context size/i,
  // OpenAI (Responses-era models, code context_length_exceeded): "Your input exceeds the context window of this
  //   model. Please adjust your input and try again." (anomalyco/opencode#6071).
  /exceeds? the context window/i,
  // OpenAI / Azure OpenAI GPT-5: "Input tokens exceed the configured limit of 272000 tokens. Your messages
  //   resulted in N tokens. Please reduce the length of the messages." (BerriAI/litellm#15968).
  /input tokens exceed the configured limit/i,
  // Anthropic, passed through by LiteLLM or OpenRouter: "prompt is too long: N tokens > M maximum".
  /prompt is too long/i,
  // Anthropic, passed through: "input length and `max_tokens` exceed context limit: N + M > L, decrease input
  //   length or `max_tokens` and try again" (docker/docker-agent#569, BrokkAi/brokk-app#540).
  /exceed context limit/i,
  // LiteLLM proxy (400, `{"error": {"message": "litellm.ContextWindowExceededError: …", "type": null,
  //   "param": null, "code": "400"}}`): its own class name heads the message whatever the upstream said
  //   (ContextWindowExceededError in litellm/exceptions.py; see OpenHands/OpenHands#5350, BerriAI/litellm#10431).
  /ContextWindowExceededError/,
  // Generic wording of smaller servers.
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
    return new LlmError('TIMEOUT', `${provider}: no response from ${context.baseURL} within ${context.timeoutMs} ms`, {
      provider,
    })
  }
  if (error instanceof APIConnectionError) {
    const cause = (error as { cause?: unknown }).cause
    const detail = describeCause(cause) ?? error.message
    return new LlmError('NETWORK', context.redact(`${provider}: cannot reach ${context.baseURL}: ${detail}`), {
      provider,
    })
  }
  if (error instanceof APIError) {
    if (typeof error.status === 'number') {
      return httpError(
        error.status,
        error.headers,
        context.bodyOf?.(error.headers) ?? JSON.stringify({ error: error.error ?? null }),
        context,
      )
    }
    // An `error` event inside an otherwise successful stream.
    // Redacted before parsing: cutting a long message first could leave part of a secret.
    const server = serverMessage(
      context.redact(error.error === undefined ? error.message : JSON.stringify({ error: error.error })),
    )
    return new LlmError(
      streamErrorCode(server),
      context.redact(`${provider}: the server reported an error inside the response stream: ${server.message}`),
      { provider },
    )
  }
  if (error instanceof SyntaxError) {
    // JSON.parse quotes a cut of the input, which could hold part of a secret a server echoed.
    return new LlmError('INVALID_RESPONSE', `${provider}: the response stream carried a chunk that is not valid JSON`, {
      provider,
      retryable: false,
    })
  }
  const detail = describeCause(error) ?? String(error)
  return new LlmError('NETWORK', context.redact(`${provider}: the response stream failed: ${detail}`), { provider })
}

/**
 * Maps a failed HTTP response: 401/403 → `AUTH`, 408 → `TIMEOUT`, 429 → `RATE_LIMITED`, 5xx →
 * `SERVER` (`codeForHttpStatus` of `@warmfold/llm`), a 4xx whose message reports a context
 * overflow → `CONTEXT_WINDOW_EXCEEDED`, any other status → `INVALID_REQUEST`. `retryAfterSeconds`
 * comes from `retry-after(-ms)`.
 */
export function httpError(
  status: number,
  headers: { get(name: string): string | null } | undefined,
  body: string,
  context: ErrorContext,
): LlmError {
  const { provider } = context
  // Redacted before parsing: cutting a long message first could leave part of a secret.
  const server = serverMessage(context.redact(body))
  const retryAfterSeconds = parseRetryAfter(headers)
  const options = { status, provider, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) }
  const say = (what: string) => context.redact(`${provider}: ${what} (HTTP ${status}): ${server.message}`)
  const code = codeForHttpStatus(status)
  if (code !== undefined) return new LlmError(code, say(STATUS_WORDS[code] ?? 'request failed'), options)
  if (status >= 400 && isContextWindowError(server))
    return new LlmError('CONTEXT_WINDOW_EXCEEDED', say("the prompt exceeds the model's context window"), options)
  return new LlmError('INVALID_REQUEST', say('request rejected'), { ...options, retryable: false })
}

/** How a message words each status-only code. */
const STATUS_WORDS: Partial<Record<LlmErrorCode, string>> = {
  AUTH: 'authentication failed',
  TIMEOUT: 'the server timed out waiting for the request',
  RATE_LIMITED: 'rate limited',
  SERVER: 'server error',
}

/**
 * The code of an `error` event inside a 200 stream: a context overflow as for an HTTP error; else
 * by its `code` when that is an HTTP status (OpenRouter sends `{ error: { code: 429, message } }`
 * for a failure after the stream began, vLLM `code: 400` with `type: 'BadRequestError'`), read
 * like the status itself (`codeForHttpStatus`, any other 4xx `INVALID_REQUEST`); else OpenAI's
 * rate-limit words (`rate_limit_exceeded`, `rate_limit_error`) → `RATE_LIMITED`; else `SERVER`.
 */
export function streamErrorCode(server: ServerMessage): LlmErrorCode {
  if (isContextWindowError(server)) return 'CONTEXT_WINDOW_EXCEEDED'
  const status = server.code === undefined || !/^\d{3}$/.test(server.code) ? undefined : Number(server.code)
  if (status !== undefined && status >= 400) return codeForHttpStatus(status) ?? 'INVALID_REQUEST'
  if (
    server.code === 'rate_limit_exceeded' ||
    server.type === 'rate_limit_error' ||
    server.type === 'rate_limit_exceeded'
  )
    return 'RATE_LIMITED'
  return 'SERVER'
}

/** Whether a server message reports a prompt that does not fit the context window. */
export function isContextWindowError(server: ServerMessage): boolean {
  if (server.code === 'context_length_exceeded' || server.type === 'exceed_context_size_error') return true
  if (CONTEXT_WINDOW_PATTERNS.some((pattern) => pattern.test(server.message))) return true
  return server.upstream !== undefined && isContextWindowError(server.upstream)
}

/**
 * Reads the message out of an error body: `{ error: { message, code, type } }` (OpenAI,
 * DeepSeek, llama.cpp, newer vLLM, LiteLLM), `{ error: "..." }`, `{ message, code, type }`
 * (older vLLM, SGLang), `{ detail }` (FastAPI servers), or the text itself. OpenRouter wraps an
 * upstream failure as `{ error: { message: "Provider returned error", metadata: { provider_name,
 * raw } } }`: the upstream body in `raw` is read the same way and appended. Long messages are cut.
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
  const upstream = upstreamMessage(source.metadata)
  const own = text === undefined ? JSON.stringify(parsed) : typeof text === 'string' ? text : JSON.stringify(text)
  return {
    message: cut(upstream ? `${own} (${upstream.provider ?? 'upstream'}: ${upstream.server.message})` : own),
    ...(source.code === undefined || source.code === null ? {} : { code: String(source.code) }),
    ...(typeof source.type === 'string' ? { type: source.type } : {}),
    ...(upstream ? { upstream: upstream.server } : {}),
  }
}

/** OpenRouter's `error.metadata`: `raw` is the upstream provider's own error body, as a string. */
function upstreamMessage(metadata: unknown): { provider?: string; server: ServerMessage } | undefined {
  if (metadata === null || typeof metadata !== 'object') return undefined
  const { raw, provider_name: provider } = metadata as { raw?: unknown; provider_name?: unknown }
  if (typeof raw !== 'string' || raw.trim() === '') return undefined
  return { ...(typeof provider === 'string' ? { provider } : {}), server: serverMessage(raw) }
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
  return [
    error.message,
    innerMessage && innerMessage !== error.message ? innerMessage : undefined,
    typeof code === 'string' ? `(${code})` : undefined,
  ]
    .filter(Boolean)
    .join(' ')
}

function cut(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text
}
