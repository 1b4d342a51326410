import type { GenerateOptions, ModelInfo, StreamChunk } from '@warmfold/llm'
import type { SecretRedactor } from '@warmfold/llm/adapter'
import { LlmAdapter, LlmError } from '@warmfold/llm'
import { modelInfo, normalizeApiKey, secretRedactor } from '@warmfold/llm/adapter'
import OpenAI from 'openai'
import type { OpenAICompatibleConfig } from './config.ts'
import { defaultPromptCacheKey, DIALECT_CACHE_TTL_MS, EXTENDED_RETENTION_TTL_MS } from './config.ts'
import type { ErrorContext } from './map-error.ts'
import { mapError } from './map-error.ts'
import type { ChatChunk } from './map-stream.ts'
import { StreamMapper } from './map-stream.ts'
import { withRetries } from './retry.ts'
import type { ChatCompletionsBody } from './serialize-request.ts'
import { serializeRequest } from './serialize-request.ts'

/** Everything {@link ChatCompletionsAdapter} needs: the parsed config plus the resolved key. */
export interface ChatCompletionsAdapterOptions extends Omit<OpenAICompatibleConfig, 'apiKey' | 'apiKeyEnv'> {
  /** The API key (surrounding whitespace is trimmed), or `undefined` for a server without keys. */
  readonly apiKey?: string
  /** Receives the SDK's warnings and errors (already redacted). */
  readonly onWarning?: (message: string) => void
  /**
   * Sends every HTTP request; default the global `fetch`. A caller that must see raw
   * responses (a cache probe) passes its own.
   */
  readonly fetch?: typeof fetch
}

/**
 * The SDK refuses to start without a key; a keyless server gets this placeholder, and the
 * `Authorization` header is removed from every request, so the placeholder is never sent.
 */
export const KEYLESS_PLACEHOLDER = 'none'

/** Which of the adapter's own limits cut a call short. */
type Expiry = 'idle' | 'deadline'

interface StreamState {
  readonly controller: AbortController
  /** Set when the adapter aborted the request itself. */
  expired?: Expiry
  /** Milliseconds spent waiting for chunks since the last one that made progress. */
  idleMs: number
}

/**
 * An {@link LlmAdapter} for OpenAI-compatible chat completions endpoints (DeepSeek, OpenAI,
 * vLLM, llama.cpp, ...). It streams every call, retries 429/5xx/connection failures itself
 * (the SDK's own retries are off), and maps the stream, usage and errors to the warmfold
 * contracts. The API key never appears in an error message, a warning or `usage.raw`.
 */
export class ChatCompletionsAdapter extends LlmAdapter {
  private readonly client: OpenAI
  private readonly errorBodies = new WeakMap<object, string>()
  private readonly secrets: SecretRedactor
  private readonly options: ChatCompletionsAdapterOptions

  /** @throws TypeError when `apiKey` is blank or has whitespace inside (the message never quotes it). */
  constructor(options: ChatCompletionsAdapterOptions) {
    super()
    // Trimmed again for direct users: redaction must look for the key exactly as the server sees it.
    const apiKey =
      options.apiKey === undefined ? undefined : normalizeApiKey(options.apiKey, 'ChatCompletionsAdapter: apiKey')
    this.options = { ...options, apiKey }
    this.secrets = secretRedactor(apiKey)
    const warn = (...args: unknown[]) =>
      options.onWarning?.(
        this.secrets.text(args.map((arg) => (typeof arg === 'string' ? arg : safeJson(arg))).join(' ')),
      )
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: apiKey ?? KEYLESS_PLACEHOLDER,
      // Explicit nulls: the SDK would otherwise read OPENAI_ORG_ID / OPENAI_PROJECT_ID / OPENAI_ADMIN_KEY.
      organization: null,
      project: null,
      adminAPIKey: null,
      maxRetries: 0,
      timeout: options.timeoutMs,
      defaultHeaders: {
        ...(apiKey === undefined && !setsAuthorization(options.headers) ? { Authorization: null } : {}),
        ...options.headers,
      },
      fetch: this.fetchKeepingErrorBodies,
      logger: { error: warn, warn, info: () => {}, debug: () => {} },
      logLevel: 'warn',
    })
  }

  /**
   * The configured facts of `model`.
   * @throws LlmError `UNKNOWN_MODEL` naming the model and the configured ones.
   */
  resolveModel(provider: string, model: string): ModelInfo {
    const config = Object.hasOwn(this.options.models, model) ? this.options.models[model] : undefined
    if (!config) {
      throw new LlmError(
        'UNKNOWN_MODEL',
        `model "${model}" is not configured for provider "${provider}"; known models: ` +
          `${Object.keys(this.options.models).join(', ')}`,
        {
          provider,
          retryable: false,
        },
      )
    }
    const retentionTtl =
      config.promptCacheRetention === '24h' ? EXTENDED_RETENTION_TTL_MS : DIALECT_CACHE_TTL_MS[this.options.dialect]
    return modelInfo(config, { cacheTtlMs: config.cacheTtlMs ?? retentionTtl })
  }

  /**
   * Streams one call: serializes it, sends it with bounded retries, and maps the response. The
   * stream is cut with `TIMEOUT` when no chunk makes progress for `timeoutMs` (empty chunks do
   * not count, see {@link StreamMapper.progress}) or when the whole call outlasts `deadlineMs`.
   * @throws LlmError for every failure (see the README's error table).
   */
  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    this.resolveModel(options.provider, options.model)
    const context = this.errorContext(options.provider)
    const body = this.request(options)
    const state: StreamState = { controller: new AbortController(), idleMs: 0 }
    const signal = options.signal
    const fail = (error: unknown): LlmError => this.failure(error, state, options, context)
    if (signal?.aborted) throw fail(new OpenAI.APIUserAbortError())
    const onAbort = () => state.controller.abort(signal?.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    const { deadlineMs } = this.options
    const startedAt = performance.now()
    const deadline = deadlineMs === undefined ? undefined : setTimeout(() => expire(state, 'deadline'), deadlineMs)
    // A retry wait the deadline would cut short is not started: the 429 reaches the caller as
    // RATE_LIMITED with its retry-after, not as a TIMEOUT that hides it.
    const remainingMs = deadlineMs === undefined ? undefined : () => deadlineMs - (performance.now() - startedAt)
    let iterator: AsyncIterator<ChatChunk> | undefined
    try {
      const response = await withRetries(
        () =>
          this.client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming, {
            signal: state.controller.signal,
            maxRetries: 0,
          }),
        this.options,
        fail,
        state.controller.signal,
        remainingMs,
      )
      const mapper = new StreamMapper(options.provider, this.options.dialect, this.secrets)
      iterator = (response as AsyncIterable<ChatChunk>)[Symbol.asyncIterator]()
      while (true) {
        const next = await this.nextChunk(iterator, state)
        // The SDK ends the iteration quietly when its request is aborted.
        if (signal?.aborted || state.expired) throw fail(new OpenAI.APIUserAbortError())
        if (next.done) break
        const progress = mapper.progress
        const chunks = mapper.push(next.value)
        if (mapper.progress !== progress) state.idleMs = 0
        yield* chunks
      }
      yield* mapper.end()
    } catch (error) {
      throw fail(error)
    } finally {
      clearTimeout(deadline)
      signal?.removeEventListener('abort', onAbort)
      // Stops the HTTP stream when the consumer stopped early; a no-op after a complete stream.
      state.controller.abort()
      await iterator?.return?.().catch(() => undefined)
    }
  }

  /**
   * The exact JSON body `stream(options)` sends, cache fields included. Pure and deterministic:
   * the same options always give the same body.
   */
  request(options: GenerateOptions): ChatCompletionsBody {
    const model = Object.hasOwn(this.options.models, options.model) ? this.options.models[options.model] : undefined
    return serializeRequest(options, this.options.dialect, {
      promptCacheKey: this.options.promptCacheKey ?? defaultPromptCacheKey(this.options.dialect),
      ...(model?.promptCacheRetention === undefined ? {} : { promptCacheRetention: model.promptCacheRetention }),
      ...(model?.cacheBreakpoints ? { cacheBreakpoints: true } : {}),
    })
  }

  /**
   * The next chunk, or an abort once `timeoutMs` of waiting has passed without progress. Only the
   * time spent waiting on the server counts: a consumer that takes its time between chunks does
   * not use up the budget.
   */
  private async nextChunk(iterator: AsyncIterator<ChatChunk>, state: StreamState): Promise<IteratorResult<ChatChunk>> {
    const started = performance.now()
    const timer = setTimeout(() => expire(state, 'idle'), Math.max(0, this.options.timeoutMs - state.idleMs))
    try {
      return await iterator.next()
    } finally {
      clearTimeout(timer)
      state.idleMs += performance.now() - started
    }
  }

  private failure(error: unknown, state: StreamState, options: GenerateOptions, context: ErrorContext): LlmError {
    const { provider } = options
    const call = `${provider}: the ${options.purpose ?? 'llm'} call to ${options.model}`
    if (options.signal?.aborted) {
      if (LlmError.isInstance(error) && error.code === 'ABORTED') return error
      return new LlmError('ABORTED', `${call} was aborted`, {
        provider,
        retryable: false,
        cause: options.signal.reason,
      })
    }
    if (state.expired === 'deadline') {
      const limit = `deadlineMs (${this.options.deadlineMs} ms)`
      return new LlmError('TIMEOUT', `${call} did not finish within ${limit}`, { provider, retryable: false })
    }
    if (state.expired === 'idle') {
      return new LlmError(
        'TIMEOUT',
        `${provider}: no stream progress from ${this.options.baseURL} for timeoutMs (${this.options.timeoutMs} ms): ` +
          `no chunk carried content, reasoning, a tool call, new usage or a finish reason`,
        { provider },
      )
    }
    return mapError(error, context)
  }

  private errorContext(provider: string): ErrorContext {
    return {
      provider,
      baseURL: this.options.baseURL,
      timeoutMs: this.options.timeoutMs,
      redact: this.secrets.text,
      bodyOf: (headers) =>
        headers !== null && typeof headers === 'object' ? this.errorBodies.get(headers) : undefined,
    }
  }

  /**
   * The SDK drops an error body it cannot read as `{ error: ... }` (older vLLM answers
   * `{ message }`), so failed responses are read here first and kept by their headers object,
   * which the SDK's error carries.
   */
  private readonly fetchKeepingErrorBodies = async (
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> => {
    const response = await (this.options.fetch ?? fetch)(input, init)
    if (response.ok) return response
    const text = await response.text().catch(() => '')
    const copy = new Response(text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
    this.errorBodies.set(copy.headers, text)
    return copy
  }
}

/** Aborts the call for `reason`, once: the first limit to run out is the one reported. */
function expire(state: StreamState, reason: Expiry): void {
  if (state.expired) return
  state.expired = reason
  state.controller.abort()
}

function setsAuthorization(headers: Readonly<Record<string, string>>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')
}

function safeJson(value: unknown): string {
  try {
    return value instanceof Error ? value.message : JSON.stringify(value)
  } catch {
    return String(value)
  }
}
