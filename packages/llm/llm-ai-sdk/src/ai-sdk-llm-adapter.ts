import type { LanguageModelV3StreamPart } from '@ai-sdk/provider'
import type { GenerateOptions, ModelInfo, StreamChunk } from '@warmfold/llm'
import { LlmAdapter, LlmError } from '@warmfold/llm'
import { callContext, modelEntry, modelInfo, resilientStream } from '@warmfold/llm/adapter'
import type { AiSdkCallOptions } from './build-call-options.ts'
import { buildCallOptions, effortReserve } from './build-call-options.ts'
import type { AiSdkAdapterConfig, AiSdkModelConfig } from './config.ts'
import { ANTHROPIC_CACHE_TTL_MS, cacheKindOf, checkSpecificationVersion } from './config.ts'
import { mapError } from './map-error.ts'
import { mapStream, streamProgress } from './map-stream.ts'

/**
 * Any Vercel AI SDK language model (provider specification `v3`, AI SDK 6) as a warmfold
 * {@link LlmAdapter}. It calls the model's `doStream` itself (no `ai` package): the call options
 * are built deterministically, the provider serializes them, and the stream parts come back as
 * warmfold chunks. Retries are the adapter's own (`retryStream`, only before output); the AI SDK
 * provider layer does not retry.
 *
 * The adapter holds no API key (the host's provider instance does); the strings of `redact` are
 * scrubbed from every error, cause and `usage.raw` it hands out.
 */
export class AiSdkLlmAdapter extends LlmAdapter {
  readonly #config: AiSdkAdapterConfig

  /**
   * `config` is a parsed config (`parseAiSdkConfig`). The provider instances inside it carry their
   * own `baseURL`, key and `fetch` (pass a wrapped `fetch` to the provider factory to observe calls).
   */
  constructor(config: AiSdkAdapterConfig) {
    super()
    this.#config = config
  }

  /**
   * Describes a configured model: `contextWindow`, `defaultMaxTokens`, `cacheTtlMs` (the model's
   * own, else 5 minutes for Anthropic models) and, with `efforts`, `reasoning`, whose
   * `outputReserveTokens` holds the thinking budget each effort enables on an Anthropic model.
   * @throws LlmError `UNKNOWN_MODEL` naming the model and the configured ones.
   */
  resolveModel(provider: string, model: string): ModelInfo {
    const config = this.#modelConfig(provider, model)
    const cacheTtlMs = config.cacheTtlMs ?? (cacheKindOf(config) === 'anthropic' ? ANTHROPIC_CACHE_TTL_MS : undefined)
    return modelInfo(config, { cacheTtlMs }, (effort) => effortReserve(config, effort))
  }

  /**
   * The V3 call options `stream(options)` passes to `doStream` (without the abort signal). Pure:
   * the same options give equal call options.
   * @throws LlmError `UNKNOWN_MODEL`, `UNSUPPORTED_REASONING_EFFORT` or `INVALID_REQUEST`.
   */
  request(options: GenerateOptions): AiSdkCallOptions {
    return buildCallOptions(options, this.#modelConfig(options.provider, options.model))
  }

  /**
   * Streams one call. Retryable failures (429, 5xx, connection, timeout, an incomplete stream or an
   * error part before any output) are retried up to `maxRetries` times. An attempt fails with
   * `TIMEOUT` when the response or stream progress takes longer than `timeoutMs`, and the call when
   * it outlasts `deadlineMs`.
   */
  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const model = this.#modelConfig(options.provider, options.model)
    const call = this.request(options)
    const context = callContext(options, this.#config.redact)
    yield* resilientStream<LanguageModelV3StreamPart>({
      // The config's attempt limits (timeoutMs, deadlineMs, maxRetries, retryBaseMs); the call's route wins.
      ...this.#config,
      ...context,
      open: async (signal) =>
        (await model.model.doStream({ ...call, abortSignal: signal }))
          .stream as unknown as AsyncIterable<LanguageModelV3StreamPart>,
      progress: streamProgress,
      map: (parts, signal) => mapStream(parts, { ...context, signal }),
      mapError: (error) => mapError(error, context),
    })
  }

  #modelConfig(provider: string, model: string): AiSdkModelConfig {
    const config = modelEntry(this.#config.models, provider, model)
    // The instance may have been swapped after the config was parsed; a V4 model is refused here too.
    try {
      checkSpecificationVersion(config.model, `models["${model}"].model`)
    } catch (error) {
      throw new LlmError('INVALID_REQUEST', (error as Error).message, { provider, retryable: false })
    }
    return config
  }
}
