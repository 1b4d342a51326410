import { getLlama, LlamaLogLevel } from 'node-llama-cpp'
import type { Llama, LlamaContext, LlamaModel, Token } from 'node-llama-cpp'
import type { PromptInput } from './render-prompt.ts'
import { renderPrompt } from './render-prompt.ts'
import { SlotPool } from './slot-pool.ts'

/** Options of {@link LlamaCacheEngine.load}. */
export interface LlamaCacheEngineOptions {
  readonly modelPath: string
  /** Tokens per slot. */
  readonly contextSize: number
  readonly slots: number
  readonly threads: number
}

/** What the engine did for one served request. Exact token counts, in request order. */
export interface LlamaCacheRecord {
  /** Prompt tokens, BOS included (`usage.prompt_tokens`). */
  readonly promptTokens: number
  /** Prompt tokens reused from the slot's KV cache (`cached_tokens`, `timings.cache_n`). */
  readonly cachedTokens: number
  /** Prompt tokens evaluated for this request, from the sequence's token meter (`timings.prompt_n`). */
  readonly evaluatedTokens: number
  /** Generated tokens, EOS included (`usage.completion_tokens`). */
  readonly completionTokens: number
  /** The slot (context sequence) that served it, 0-based. */
  readonly slot: number
  /**
   * Common prefix, in tokens, of the prompt and that slot's cache before the request.
   * `cachedTokens` is this capped at `promptTokens - 1`: the last prompt token is always evaluated.
   */
  readonly firstDifferentIndex: number
}

/** One completion and what the engine did for it. Token counts are exact, not estimates. */
export interface CompletionResult extends LlamaCacheRecord {
  /** The decoded completion, EOS excluded. */
  readonly text: string
  readonly finishReason: 'stop' | 'length'
  /** Wall time of the prompt phase (cache trim, prefill, first token), in milliseconds. */
  readonly promptMs: number
  /** Wall time of generating the remaining tokens, in milliseconds. */
  readonly predictedMs: number
}

/** The prompt does not fit into a slot (llama-server: prompt tokens ≥ slot context). */
export class ContextSizeExceededError extends Error {
  override readonly name = 'ContextSizeExceededError'

  constructor(
    readonly promptTokens: number,
    readonly contextSize: number,
  ) {
    super('the request exceeds the available context size, try increasing it')
  }
}

/** Per-request generation controls. */
export interface CompletionControls {
  readonly maxTokens: number
  /** Called with each new piece of text as soon as it is valid UTF-8. */
  readonly onText?: (delta: string) => void
  /** Stops generating early (the client went away). */
  readonly signal?: AbortSignal
}

/**
 * node-llama-cpp wired the way llama-server serves a prompt: render, tokenize with special
 * tokens and BOS, pick a slot, keep the cached prefix (`adaptStateToTokens(tokens[:-1], false)`,
 * which erases everything after the first differing token), evaluate the rest, decode greedily.
 * Not safe for concurrent calls: the server serializes them.
 */
export class LlamaCacheEngine {
  private constructor(
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly pool: SlotPool,
  ) {}

  /** Loads the prebuilt CPU binary (never builds or downloads), the model and one context with `slots` sequences. */
  static async load(options: LlamaCacheEngineOptions): Promise<LlamaCacheEngine> {
    const llama = await getLlama({
      gpu: false,
      build: 'never',
      maxThreads: options.threads,
      logLevel: LlamaLogLevel.error,
    })
    try {
      const model = await llama.loadModel({ modelPath: options.modelPath, gpuLayers: 0 })
      const context = await model.createContext({
        contextSize: options.contextSize,
        sequences: options.slots,
        // Measured on 2 cores: flash attention and threads = cores make prefill about 6x faster than the defaults.
        flashAttention: true,
        threads: options.threads,
        batchSize: 512,
      })
      const sequences = Array.from({ length: options.slots }, () => context.getSequence())
      return new LlamaCacheEngine(llama, model, context, new SlotPool(sequences))
    } catch (error) {
      await llama.dispose()
      throw error
    }
  }

  /** Tokens per slot, as the context was actually created (llama.cpp may round up). */
  get contextSize(): number {
    return this.context.contextSize
  }

  /** The prompt as token ids: BOS (when the model asks for it), then the rendered text with control tokens parsed. */
  tokenize(prompt: PromptInput): Token[] {
    const tokens = this.model.tokenize(renderPrompt(prompt), true)
    const bos = this.model.tokens.bos
    return this.model.tokens.shouldPrependBosToken && bos !== null ? [bos, ...tokens] : tokens
  }

  /** Throws when `tokens` does not fit into a slot (prompt tokens ≥ context size, as llama-server rules). */
  assertFits(tokens: readonly Token[]): void {
    if (tokens.length >= this.context.contextSize)
      throw new ContextSizeExceededError(tokens.length, this.context.contextSize)
  }

  /**
   * Serves one prompt given as tokens (from {@link tokenize}).
   * @throws ContextSizeExceededError before touching any cache when the prompt does not fit.
   */
  async complete(tokens: readonly Token[], controls: CompletionControls): Promise<CompletionResult> {
    this.assertFits(tokens)
    const contextSize = this.context.contextSize
    const { index: slot, sequence, firstDifferentIndex } = this.pool.choose(tokens)

    const started = performance.now()
    // Keep at least one prompt token to evaluate, so there are logits to sample from.
    await sequence.adaptStateToTokens(tokens.slice(0, -1), false)
    const cachedTokens = sequence.nextTokenIndex
    const meter = sequence.tokenMeter.getState()
    // Stop before the slot is full instead of letting node-llama-cpp shift the context.
    const budget = Math.min(controls.maxTokens, contextSize - tokens.length)
    const generated: Token[] = []
    let finishReason: 'stop' | 'length' = 'length'
    let firstTokenAt = started
    let emitted = ''
    const textTokens: Token[] = []
    // Every next() after the first feeds the previously yielded token back into the sequence.
    let fedBack = -1
    const iterator = sequence.evaluate(tokens.slice(cachedTokens), { temperature: 0, yieldEogToken: true })
    const advance = () => {
      fedBack++
      return iterator.next()
    }
    try {
      for (let step = await advance(); ; step = await advance()) {
        if (generated.length === 0) firstTokenAt = performance.now()
        if (step.done) {
          finishReason = 'stop'
          break
        }
        generated.push(step.value)
        if (this.model.isEogToken(step.value)) {
          finishReason = 'stop'
          break
        }
        textTokens.push(step.value)
        const text = this.model.detokenize(textTokens)
        // Hold back a possibly incomplete UTF-8 sequence until the next token completes it.
        if (text.startsWith(emitted) && !text.endsWith('\uFFFD')) {
          if (text.length > emitted.length) controls.onText?.(text.slice(emitted.length))
          emitted = text
        }
        if (generated.length >= budget || controls.signal?.aborted) break
      }
    } finally {
      await iterator.return()
    }
    const finished = performance.now()
    const text = this.model.detokenize(textTokens)
    if (text.startsWith(emitted) && text.length > emitted.length) controls.onText?.(text.slice(emitted.length))

    // The meter counts every token sent to llama_decode, split by whether logits were requested;
    // the generated tokens fed back are not prompt tokens.
    const decoded = sequence.tokenMeter.diff(meter)
    const evaluatedTokens = decoded.usedInputTokens + decoded.usedOutputTokens - fedBack
    return {
      promptTokens: tokens.length,
      cachedTokens,
      evaluatedTokens,
      completionTokens: generated.length,
      text,
      finishReason,
      slot,
      firstDifferentIndex,
      promptMs: firstTokenAt - started,
      predictedMs: finished - firstTokenAt,
    }
  }

  /** Frees the context, the model and the native backend. */
  async dispose(): Promise<void> {
    await this.context.dispose()
    await this.model.dispose()
    await this.llama.dispose()
  }
}
