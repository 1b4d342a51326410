import type { Parsed } from './plugin-config.ts'
import type { WarmfoldPluginInfo } from './plugin-failures.ts'
import { LLM_ADAPTER_ROLE, pluginFailures, WARMFOLD_PLUGIN } from './plugin-failures.ts'
import type { Context } from '@cordisjs/core'
import { Service } from '@cordisjs/core'
import Schema from 'schemastery'
import type { GenerateResult } from './content-assembler.ts'
import { ContentAssembler } from './content-assembler.ts'
import type { ConfigParser } from './strict-config.ts'
import { strictConfig } from './strict-config.ts'
import { deepFreeze } from './deep-freeze.ts'
import type { GenerateOptions } from './generate-options.ts'
import type { LlmAdapter } from './llm-adapter.ts'
import { LlmError } from './llm-error.ts'
import type { ModelInfo } from './model-info.ts'
import type { FinishReason, StreamChunk } from './stream-chunk.ts'
import type { TokenUsage } from './token-usage.ts'

type Awaitable<T> = T | Promise<T>

declare module '@cordisjs/core' {
  interface Context {
    llm: LlmRuntime
  }
  interface Events {
    /**
     * Fired once per call, after defaults are materialized and before the adapter sees the
     * request. `options` is deep-frozen and is exactly what the adapter receives.
     */
    'llm/stream'(options: GenerateOptions): Awaitable<void>
    /**
     * Fired once per call that reached the adapter, when its stream ends: with the finish
     * chunk's reason, or `error` / `aborted` when it ended without one. `options` is the same
     * object `llm/stream` saw. Listeners run synchronously and must not throw: an error a
     * listener throws is reported as `internal/error` and never changes the call's outcome.
     */
    'llm/finish'(options: GenerateOptions, outcome: LlmFinish): void
  }
}

/** How one call's stream ended, as `llm/finish` reports it. */
export interface LlmFinish {
  /** The last `usage` chunk of the stream, or `undefined` when the adapter sent none. */
  readonly usage?: TokenUsage
  /**
   * The `finish` chunk's reason. Without a finish chunk: `aborted` when the call was aborted or
   * the consumer stopped reading early, `error` when the adapter threw or its stream ended
   * without `finish`.
   */
  readonly finishReason: FinishReason
  /** What the adapter threw, when it threw. */
  readonly error?: unknown
}

/**
 * The `ctx.llm` service: routes calls to registered adapters, materializes the adapter's
 * defaults, and lets observers see every request.
 */
export class LlmRuntime extends Service<LlmRuntime.Config> {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = { packageName: '@warmfold/llm', provides: 'ctx.llm' }
  static [Service.provide] = 'llm'
  static [Service.immediate]: boolean = true

  private readonly adapters = new Map<string, LlmAdapter>()

  constructor(ctx: Context, config: Parsed<LlmRuntime.Config>) {
    super(ctx, config)
  }

  /**
   * Registers `adapter` for each provider id. The registration is undone by the returned
   * disposer, and automatically when the registering plugin unloads.
   * @throws Error when a provider id is already registered (the message names it).
   */
  registerAdapter(providers: string | readonly string[], adapter: LlmAdapter): () => void {
    const ids = typeof providers === 'string' ? [providers] : [...providers]
    if (ids.length === 0) throw new TypeError('registerAdapter: at least one provider id is required')
    for (const id of ids) {
      if (typeof id !== 'string' || id === '')
        throw new TypeError(`registerAdapter: provider id must be a non-empty string, got ${JSON.stringify(id)}`)
      if (this.adapters.has(id)) throw new Error(`registerAdapter: provider "${id}" is already registered`)
    }
    return this.ctx.effect(() => {
      for (const id of ids) this.adapters.set(id, adapter)
      return () => {
        for (const id of ids) if (this.adapters.get(id) === adapter) this.adapters.delete(id)
      }
    })
  }

  /** Provider ids with a registered adapter, sorted. */
  providers(): string[] {
    return [...this.adapters.keys()].toSorted()
  }

  /**
   * Describes `model` of `provider`.
   * @throws LlmError `UNKNOWN_PROVIDER` naming the provider and listing the registered ones,
   *   or the adapter's `UNKNOWN_MODEL`.
   */
  async resolveModelInfo(provider: string, model: string): Promise<ModelInfo> {
    return this.adapterFor(provider).resolveModel(provider, model)
  }

  /**
   * The options a call will actually send: an omitted `reasoningEffort` becomes the model's
   * `defaultEffort`, an omitted `maxTokens` becomes `defaultMaxTokens`. The result is frozen.
   * @throws LlmError for an unknown provider/model, or an effort the model does not accept.
   */
  async prepare(options: GenerateOptions): Promise<GenerateOptions> {
    const info = await this.resolveModelInfo(options.provider, options.model)
    const prepared: { -readonly [K in keyof GenerateOptions]: GenerateOptions[K] } = { ...options }
    if (prepared.reasoningEffort === undefined && info.reasoning?.defaultEffort !== undefined) {
      prepared.reasoningEffort = info.reasoning.defaultEffort
    }
    if (
      prepared.reasoningEffort !== undefined &&
      info.reasoning &&
      !info.reasoning.efforts.includes(prepared.reasoningEffort)
    ) {
      throw new LlmError(
        'UNSUPPORTED_REASONING_EFFORT',
        `reasoningEffort "${prepared.reasoningEffort}" is not supported by ${options.provider}/${options.model}; ` +
          `it accepts ${info.reasoning.efforts.join(', ')}`,
        { provider: options.provider },
      )
    }
    if (prepared.maxTokens === undefined && info.defaultMaxTokens !== undefined)
      prepared.maxTokens = info.defaultMaxTokens
    if (prepared.maxTokens !== undefined && (!Number.isInteger(prepared.maxTokens) || prepared.maxTokens <= 0)) {
      throw new LlmError('INVALID_REQUEST', `maxTokens must be a positive integer, got ${prepared.maxTokens}`, {
        provider: options.provider,
      })
    }
    // The signal is a live object and must not be frozen; everything else is request data.
    const { signal, ...data } = prepared
    const frozen = deepFreeze({
      ...data,
      messages: [...data.messages],
      ...(data.tools ? { tools: [...data.tools] } : {}),
    })
    return signal ? Object.freeze({ ...frozen, signal }) : frozen
  }

  /**
   * Streams one call: prepares it, fires `llm/stream` with the final options, then yields the
   * adapter's chunks.
   */
  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const prepared = await this.prepare(options)
    const adapter = this.adapterFor(prepared.provider)
    // Checked before the hook too: observers record what was sent, and this call never is.
    if (prepared.signal?.aborted) throw abortedError(prepared)
    await this.ctx.serial('llm/stream', prepared)
    if (prepared.signal?.aborted) throw abortedError(prepared)
    // Two field reads per chunk: what `llm/finish` reports is collected on the way through.
    let usage: TokenUsage | undefined
    let finishReason: FinishReason | undefined
    let failure: { error: unknown } | undefined
    let ended = false
    try {
      for await (const chunk of adapter.stream(prepared)) {
        if (chunk.type === 'usage') usage = chunk.usage
        else if (chunk.type === 'finish') finishReason = chunk.reason
        yield chunk
      }
      ended = true
    } catch (error) {
      failure = { error }
      throw error
    } finally {
      const aborted =
        prepared.signal?.aborted || (failure && LlmError.isInstance(failure.error) && failure.error.code === 'ABORTED')
      const reason: FinishReason = finishReason ?? (aborted || (!failure && !ended) ? 'aborted' : 'error')
      emitFinish(this.ctx, prepared, { usage, finishReason: reason, ...failure })
    }
  }

  /**
   * Runs one call to completion and assembles its chunks.
   * @throws LlmError `STREAM_INCOMPLETE` when the adapter's stream ends without `finish`.
   */
  async generate(options: GenerateOptions): Promise<GenerateResult> {
    const assembler = new ContentAssembler()
    for await (const chunk of this.stream(options)) assembler.push(chunk)
    return assembler.result()
  }

  /**
   * @throws LlmError `UNKNOWN_PROVIDER`, naming the adapter plugins that failed to load (the one
   *   whose default provider is `provider` first), since a refused adapter config is the usual
   *   reason a provider has no adapter.
   */
  private adapterFor(provider: string): LlmAdapter {
    const adapter = this.adapters.get(provider)
    if (adapter) return adapter
    const known = this.providers()
    const failed = pluginFailures(this.ctx)
      .filter((failure) => failure.warmfold?.provides === LLM_ADAPTER_ROLE)
      .toSorted(
        (a, b) => Number(b.warmfold?.defaultProvider === provider) - Number(a.warmfold?.defaultProvider === provider),
      )
    throw new LlmError(
      'UNKNOWN_PROVIDER',
      `no LLM adapter is registered for provider ` +
        `"${provider}"${failed.length ? `: ${failed.map((failure) => failure.message).join('; ')}` : ''}; ` +
        `registered providers: ${known.length ? known.join(', ') : '(none)'}`,
      { provider, retryable: false },
    )
  }
}

/**
 * Fires `llm/finish`; a listener's error is reported, never thrown into the caller's stream. A
 * function, not a method: `this` inside a service method is a cordis tracing proxy, and every
 * method looked up through it costs a proxy of its own.
 */
function emitFinish(ctx: Context, options: GenerateOptions, outcome: LlmFinish): void {
  try {
    ctx.emit('llm/finish', options, outcome)
  } catch (error) {
    ctx.emit('internal/error', error)
  }
}

function abortedError(options: GenerateOptions): LlmError {
  return new LlmError(
    'ABORTED',
    `the ${options.purpose ?? 'llm'} call to ${options.provider}/${options.model} was aborted`,
    {
      provider: options.provider,
      cause: options.signal?.reason,
      retryable: false,
    },
  )
}

export namespace LlmRuntime {
  /** `ctx.llm` has no settings yet; unknown keys are rejected. */
  export type Config = Record<string, never>
  export const Config: ConfigParser<Config> = strictConfig('LlmRuntime', Schema.object({})) as ConfigParser<Config>
}
