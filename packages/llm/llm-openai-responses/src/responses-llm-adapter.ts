import type { GenerateOptions, ModelInfo, StreamChunk } from '@warmfold/llm'
import { LlmAdapter, promptCacheKeyFor } from '@warmfold/llm'
import { callContext, modelEntry, normalizeApiKey, modelInfo, resilientStream } from '@warmfold/llm/adapter'
import OpenAI from 'openai'
import type { ResponseCreateParamsStreaming } from 'openai/resources/responses/responses'
import type { OpenAIResponsesConfig } from './config.ts'
import { PROMPT_CACHE_RETENTION_TTL_MS } from './config.ts'
import { mapError } from './map-error.ts'
import type { ResponsesEvent } from './map-stream.ts'
import { mapStream } from './map-stream.ts'
import type { ResponsesRequestBody } from './serialize-request.ts'
import { serializeRequest } from './serialize-request.ts'
import { streamProgress } from './stream-progress.ts'

/** Optional collaborators of {@link ResponsesLlmAdapter}. */
export interface ResponsesAdapterOptions {
  /** Sends every HTTP request; default the global `fetch`. A cache probe passes its own to see raw responses. */
  readonly fetch?: typeof fetch
}

/**
 * The OpenAI Responses API as a stateless warmfold {@link LlmAdapter}: every request carries the
 * whole conversation (`store: false`, no `previous_response_id`), asks for the encrypted reasoning
 * and replays each reasoning item in its original position, with byte-stable bodies. Streamed
 * through the official SDK with its retries off and `retryStream` instead (never after output).
 *
 * The API key is held in private fields only and is redacted from every error, cause and
 * `usage.raw` the adapter hands out.
 */
export class ResponsesLlmAdapter extends LlmAdapter {
  readonly #config: OpenAIResponsesConfig
  readonly #client: OpenAI
  readonly #secret: string

  /**
   * `config` is a parsed config (`parseResponsesConfig`); `apiKey` the resolved key (trimmed).
   * @throws TypeError when `apiKey` is blank or has whitespace inside (the message never quotes it).
   */
  constructor(config: OpenAIResponsesConfig, rawApiKey: string, options: ResponsesAdapterOptions = {}) {
    super()
    const apiKey = normalizeApiKey(rawApiKey, 'ResponsesLlmAdapter: apiKey')
    this.#config = config
    this.#secret = apiKey
    this.#client = new OpenAI({
      apiKey,
      baseURL: config.baseURL,
      // Explicit nulls: the SDK would otherwise read OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment.
      organization: null,
      project: null,
      // Retries are ours (retryStream): bounded, honouring retry-after, never after output began.
      maxRetries: 0,
      timeout: config.timeoutMs,
      logLevel: 'off',
      ...(options.fetch ? { fetch: options.fetch } : {}),
    })
  }

  /**
   * Describes a configured model: `contextWindow`, `defaultMaxTokens`, `cacheTtlMs` (the model's own,
   * else the one its `cacheRetention` implies, else unknown) and `reasoning` when it lists efforts.
   * @throws LlmError `UNKNOWN_MODEL` naming the model and the configured ones.
   */
  resolveModel(provider: string, model: string): ModelInfo {
    const config = modelEntry(this.#config.models, provider, model)
    const retention = config.cacheRetention
    const retentionTtl = retention === undefined ? undefined : PROMPT_CACHE_RETENTION_TTL_MS[retention]
    return modelInfo(config, { cacheTtlMs: config.cacheTtlMs ?? retentionTtl })
  }

  /**
   * The exact JSON body `stream(options)` sends. Pure and deterministic: the same options always
   * give the same body.
   * @throws LlmError `UNKNOWN_MODEL` or `INVALID_REQUEST` (e.g. `stop`, which the API does not take).
   */
  request(options: GenerateOptions): ResponsesRequestBody {
    const model = modelEntry(this.#config.models, options.provider, options.model)
    // A fork sends its parent's key (cacheSessionId), so it is routed to the parent's cache.
    const session =
      this.#config.promptCacheKey === 'session' ? (options.cacheSessionId ?? options.sessionId) : undefined
    return serializeRequest(options, {
      provider: options.provider,
      defaultMaxTokens: model.defaultMaxTokens,
      reasoningSummary: this.#config.reasoningSummary,
      promptCacheKey: session === undefined ? undefined : promptCacheKeyFor(session),
      cacheRetention: model.cacheRetention,
    })
  }

  /**
   * Streams one call. Retryable failures (429, 5xx, connection, timeout, a retryable error event
   * before any content) are retried up to `maxRetries` times; every failure is thrown as an
   * `LlmError`. An attempt fails with `TIMEOUT` when no event makes progress for `timeoutMs`, the
   * whole call when it outlasts `deadlineMs`.
   */
  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    // Input items are sent without ids (store: false cannot resolve them), which the SDK's types require.
    const params = this.request(options) as unknown as ResponseCreateParamsStreaming
    const context = callContext(options, this.#secret)
    yield* resilientStream<ResponsesEvent>({
      // The config's attempt limits (timeoutMs, deadlineMs, maxRetries, retryBaseMs); the call's route wins.
      ...this.#config,
      ...context,
      open: async (signal) =>
        (await this.#client.responses.create(params, { signal })) as unknown as AsyncIterable<ResponsesEvent>,
      progress: streamProgress,
      map: (events, signal) => mapStream(events, { ...context, signal }),
      mapError: (error) => mapError(error, context),
    })
  }
}
