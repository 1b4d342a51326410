import type { GenerateOptions } from './generate-options.ts'
import type { ModelInfo } from './model-info.ts'
import type { StreamChunk } from './stream-chunk.ts'

/**
 * A provider adapter: turns {@link GenerateOptions} into the provider's wire format and the
 * provider's stream back into {@link StreamChunk}s. Adapters are plain objects registered with
 * `ctx.llm.registerAdapter`; an adapter package is a plugin that registers one.
 *
 * Contract: `stream` must serialize deterministically (the same options give the same bytes),
 * must end with a `finish` chunk or throw an `LlmError`, and must map provider usage into
 * disjoint `TokenUsage` buckets, leaving unreported fields undefined.
 */
export abstract class LlmAdapter {
  /**
   * Describes `model` of `provider`.
   * @throws LlmError `UNKNOWN_MODEL` naming the model and the models the adapter knows.
   */
  abstract resolveModel(provider: string, model: string): ModelInfo | Promise<ModelInfo>

  /** Streams one call. `options` already carries materialized defaults (see `LlmRuntime`). */
  abstract stream(options: GenerateOptions): AsyncIterable<StreamChunk>
}
