import Anthropic from '@anthropic-ai/sdk'
import type { MessageCreateParamsStreaming, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages'
import type { GenerateOptions, ModelInfo, StreamChunk } from '@warmfold/llm'
import { LlmAdapter } from '@warmfold/llm'
import {
  callContext,
  checkOutputReserve,
  modelEntry,
  modelInfo,
  normalizeApiKey,
  resilientStream,
} from '@warmfold/llm/adapter'
import type { AnthropicAdapterConfig } from './config.ts'
import { CACHE_PRICES, CACHE_TTL_MS, THINKING_OFF } from './config.ts'
import { mapError } from './map-error.ts'
import { mapStream } from './map-stream.ts'
import { placeBreakpoints } from './place-breakpoints.ts'
import type { AnthropicRequestBody } from './serialize-request.ts'
import { serializeMessages, serializeRequest } from './serialize-request.ts'
import { streamProgress } from './stream-progress.ts'

/**
 * The Anthropic Messages API as a warmfold {@link LlmAdapter}: deterministic request bodies with
 * two `cache_control` breakpoints, streamed through the official SDK with the SDK's own retries
 * off and a bounded retry loop of its own. `AnthropicAdapter` (the cordis plugin) builds one and
 * registers it; it can also be used directly.
 *
 * The API key is held in private fields only and is sent as `x-api-key`; it is redacted from
 * every error, cause and `usage.raw` the adapter hands out.
 */
export class AnthropicLlmAdapter extends LlmAdapter {
  readonly #config: AnthropicAdapterConfig
  readonly #client: Anthropic
  readonly #secret: string

  /**
   * `config` is a parsed config (`parseAnthropicConfig`); `apiKey` the resolved key (surrounding
   * whitespace is trimmed); `options.fetch` replaces the global fetch (a proxy, or the cache
   * probe, which reads every answer).
   * @throws TypeError when `apiKey` is blank or has whitespace inside (the message never quotes it).
   */
  constructor(config: AnthropicAdapterConfig, rawApiKey: string, options: { readonly fetch?: typeof fetch } = {}) {
    super()
    // Trimmed again for direct users: redaction must look for the key exactly as the server sees it.
    const apiKey = normalizeApiKey(rawApiKey, 'AnthropicLlmAdapter: apiKey')
    this.#config = config
    this.#secret = apiKey
    this.#client = new Anthropic({
      apiKey,
      baseURL: config.baseURL,
      // Retries are ours (retryStream): bounded, honouring retry-after, never after output began.
      maxRetries: 0,
      timeout: config.timeoutMs,
      // Failures surface as LlmErrors; the adapter never writes to the console itself.
      logLevel: 'off',
      // Anthropic's documented header. The SDK would send the key as a Bearer token.
      defaultHeaders: { 'x-api-key': apiKey, authorization: null },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    })
  }

  /**
   * Describes a configured model: `contextWindow`, `defaultMaxTokens`, `cacheTtlMs` (the model's
   * own, else the lifetime of its breakpoints: the model's `cacheTtl`, else the adapter's),
   * `cachePrices` of that TTL (`CACHE_PRICES`: read 0.1, write 1.25 or 2) and, when the model lists `efforts`,
   * `reasoning: { efforts, defaultEffort, outputReserveTokens }`: each effort's thinking budget
   * (`thinkingBudgets`), which `max_tokens` must exceed.
   * @throws LlmError `UNKNOWN_MODEL` naming the model and the configured ones.
   */
  resolveModel(provider: string, model: string): ModelInfo {
    const config = modelEntry(this.#config.models, provider, model)
    const ttl = config.cacheTtl ?? this.#config.cacheTtl
    const cache = { cacheTtlMs: config.cacheTtlMs ?? CACHE_TTL_MS[ttl], cachePrices: CACHE_PRICES[ttl] }
    const budgets = this.#config.thinkingBudgets
    // `off`, and an effort without a budget, send no thinking: nothing is reserved.
    return modelInfo(config, cache, (effort) =>
      effort !== THINKING_OFF && Object.hasOwn(budgets, effort) ? budgets[effort]! : 0,
    )
  }

  /**
   * The exact JSON body `stream(options)` sends, breakpoints included. Pure and deterministic:
   * the same options always give the same body.
   * @throws LlmError `UNKNOWN_MODEL`, `UNSUPPORTED_REASONING_EFFORT` or `INVALID_REQUEST` (also
   *   for a `max_tokens` at or below the effort's thinking budget, which Anthropic rejects).
   */
  request(options: GenerateOptions): AnthropicRequestBody {
    const model = modelEntry(this.#config.models, options.provider, options.model)
    const settings = {
      provider: options.provider,
      defaultMaxTokens: model.defaultMaxTokens,
      thinkingBudgets: this.#config.thinkingBudgets,
    }
    const body = serializeRequest(options, settings)
    // Anthropic answers 400 for max_tokens ≤ budget_tokens; refused here, naming both numbers.
    if (body.thinking) {
      checkOutputReserve(
        { ...options, maxTokens: body.max_tokens },
        body.thinking.budget_tokens,
        `thinkingBudgets.${options.reasoningEffort}, sent as thinking.budget_tokens`,
      )
    }
    // A summary call's trailing instruction is asked once: its blocks get no breakpoint, so the
    // last one ends the replayed region (read back) and nothing is written for the instruction.
    const instruction = options.purpose === 'compaction' ? options.messages.at(-1) : undefined
    const excludeTrailingBlocks = instruction
      ? serializeMessages([instruction], options.provider).reduce((count, message) => count + message.content.length, 0)
      : 0
    // A call that asks for the short tier (a one-shot fork) writes its messages for 5 minutes;
    // the head keeps the model's TTL, so it reads and refreshes the parent's entry as before.
    return placeBreakpoints(body, {
      ttl: model.cacheTtl ?? this.#config.cacheTtl,
      excludeTrailingBlocks,
      ...(options.cacheTtl === 'short' ? { messageTtl: '5m' as const } : {}),
    })
  }

  /**
   * Streams one call. Retryable failures (429, 5xx, 529, connection, timeout, and an `error`
   * event before any content) are retried up to `maxRetries` times; every failure is thrown as
   * an `LlmError`. An attempt fails with `TIMEOUT` when no event makes progress for `timeoutMs`
   * (pings and empty deltas do not count), and the whole call when it outlasts `deadlineMs`.
   */
  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const body = this.request(options)
    // `temperature` is not in the installed SDK's parameter types; the body is sent as built.
    const params = body as unknown as MessageCreateParamsStreaming
    const context = callContext(options, this.#secret)
    yield* resilientStream<RawMessageStreamEvent>({
      // The config's attempt limits (timeoutMs, deadlineMs, maxRetries, retryBaseMs); the call's route wins.
      ...this.#config,
      ...context,
      stallNote: ' (pings and empty deltas do not count)',
      open: (signal) => this.#client.messages.create(params, { signal }),
      progress: streamProgress,
      map: (events, signal) => mapStream(events, { ...context, signal }),
      mapError: (error) => mapError(error, context),
    })
  }
}
