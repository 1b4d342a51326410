import type { GenerateContentParameters } from '@google/genai'
import { GoogleGenAI } from '@google/genai'
import type { GenerateOptions, ModelInfo, StreamChunk } from '@warmfold/llm'
import { LlmAdapter } from '@warmfold/llm'
import { callContext, modelEntry, normalizeApiKey, modelInfo, resilientStream } from '@warmfold/llm/adapter'
import type { GoogleAdapterConfig } from './config.ts'
import type { ErrorContext } from './map-error.ts'
import { mapError } from './map-error.ts'
import type { GeminiChunk } from './map-stream.ts'
import { mapStream } from './map-stream.ts'
import type { GeminiRequestBody } from './serialize-request.ts'
import { serializeRequest } from './serialize-request.ts'
import { streamProgress } from './stream-progress.ts'
import { thinkingReserve, thinkingTable } from './thinking.ts'

/** The `fetch` the SDK calls: the global one, or a wrapper (a cache probe, a proxy). */
export type GoogleFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** Options of {@link GoogleLlmAdapter} besides its config and key. */
export interface GoogleLlmAdapterOptions {
  /** Used for every request instead of the global `fetch` (the SDK's `httpOptions.fetch`). */
  readonly fetch?: GoogleFetch
}

/**
 * The Gemini API (`streamGenerateContent?alt=sse`) as a warmfold {@link LlmAdapter}, on the
 * official `@google/genai` SDK with its retries and automatic continuation off and a bounded retry
 * loop of its own. Request bodies are byte-stable, so Gemini's implicit prefix cache can hit;
 * thought signatures are kept on the blocks they came with and replayed on the same parts.
 *
 * The API key is held in private fields only and is sent as `x-goog-api-key`; it is redacted from
 * every error, cause and `usage.raw` the adapter hands out.
 */
export class GoogleLlmAdapter extends LlmAdapter {
  readonly #config: GoogleAdapterConfig
  readonly #client: GoogleGenAI
  readonly #secret: string
  readonly #fetch: GoogleFetch | undefined

  /**
   * `config` is a parsed config (`parseGoogleConfig`); `apiKey` the resolved key (surrounding
   * whitespace is trimmed); `options.fetch` replaces the global `fetch`.
   * @throws TypeError when `apiKey` is blank or has whitespace inside (the message never quotes it).
   */
  constructor(config: GoogleAdapterConfig, rawApiKey: string, options: GoogleLlmAdapterOptions = {}) {
    super()
    const apiKey = normalizeApiKey(rawApiKey, 'GoogleLlmAdapter: apiKey')
    this.#config = config
    this.#secret = apiKey
    this.#fetch = options.fetch
    this.#client = new GoogleGenAI({
      apiKey,
      // Explicit, so GOOGLE_GENAI_USE_VERTEXAI / GOOGLE_GENAI_USE_ENTERPRISE in the environment cannot switch backends.
      vertexai: false,
      ...(config.apiVersion === undefined ? {} : { apiVersion: config.apiVersion }),
      // No `timeout`: the SDK's timer covers the whole body, and sends X-Server-Timeout; ours watches progress.
      ...(config.baseURL === undefined ? {} : { httpOptions: { baseUrl: config.baseURL } }),
    })
  }

  /**
   * Describes a configured model: `contextWindow`, `defaultMaxTokens` and `cacheTtlMs` when
   * configured, and `reasoning: { efforts, defaultEffort, outputReserveTokens }` when it has a
   * thinking table (its own or its family's); `outputReserveTokens` holds each effort's positive
   * `thinkingBudget`, which counts against `maxOutputTokens`.
   * @throws LlmError `UNKNOWN_MODEL` naming the model and the configured ones.
   */
  resolveModel(provider: string, model: string): ModelInfo {
    const config = modelEntry(this.#config.models, provider, model)
    const table = thinkingTable(model, config)
    const efforts = config.efforts ?? (table ? Object.keys(table.table) : undefined)
    return modelInfo({ ...config, efforts }, config, (effort) => thinkingReserve(table, effort))
  }

  /**
   * The exact JSON body `stream(options)` sends (the SDK writes the same keys in the same order).
   * Pure and deterministic: the same options always give the same body.
   *
   * A `maxOutputTokens` at or below the effort's `thinkingBudget` is sent as it is: Gemini accepts
   * it, and the budget is an upper bound the model often stays well under. Thinking that does run
   * past the cap ends the reply with `MAX_TOKENS` (`max-tokens`), possibly without text; the
   * model's `outputReserveTokens` lets a caller size the cap so that cannot happen.
   * @throws LlmError `UNKNOWN_MODEL`, `UNSUPPORTED_REASONING_EFFORT` or `INVALID_REQUEST`.
   */
  request(options: GenerateOptions): GeminiRequestBody {
    const model = modelEntry(this.#config.models, options.provider, options.model)
    return serializeRequest(options, {
      defaultMaxTokens: model.defaultMaxTokens,
      thinking: thinkingTable(options.model, model),
      includeThoughts: this.#config.includeThoughts,
    })
  }

  /**
   * Streams one call. Retryable failures (429, 5xx, connection, timeout, a cut stream, an error
   * chunk before any content) are retried up to `maxRetries` times, never after output reached the
   * caller; every failure is thrown as an `LlmError`. An attempt fails with `TIMEOUT` when no chunk
   * makes progress for `timeoutMs` (the wait for the headers included), and the whole call when it
   * outlasts `deadlineMs`.
   */
  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const body = this.request(options)
    let headers: Headers | undefined
    const context: ErrorContext = { ...callContext(options, this.#secret), headers: () => headers }
    // The SDK's ApiError drops the response headers; this wrapper keeps the attempt's for retry-after.
    const base = this.#fetch ?? globalThis.fetch
    const fetch: GoogleFetch = async (input, init) => {
      const response = await base(input, init)
      headers = response.headers
      return response
    }
    yield* resilientStream<GeminiChunk>({
      // The config's attempt limits (timeoutMs, deadlineMs, maxRetries, retryBaseMs); the call's route wins.
      ...this.#config,
      ...context,
      open: (signal) => {
        headers = undefined
        return this.#send(options.model, body, fetch, signal)
      },
      progress: streamProgress,
      map: (events, signal) => mapStream(events, { ...context, signal }),
      mapError: (error) => mapError(error, context),
    })
  }

  async #send(
    model: string,
    body: GeminiRequestBody,
    fetch: GoogleFetch,
    signal: AbortSignal,
  ): Promise<AsyncIterable<GeminiChunk>> {
    const { contents, generationConfig, ...head } = body
    const params = {
      model,
      contents,
      config: {
        ...head,
        ...generationConfig,
        abortSignal: signal,
        httpOptions: { fetch },
        // Neither reaches the body: no SDK-side tool execution, and no hidden follow-up requests.
        automaticFunctionCalling: { disable: true },
        automaticContinuation: false,
      },
    } as unknown as GenerateContentParameters
    return (await this.#client.models.generateContentStream(params)) as AsyncIterable<GeminiChunk>
  }
}
