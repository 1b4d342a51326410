import type { ContentBlock } from '../content-block.ts'
import { textBlock } from '../content-block.ts'
import type { GenerateOptions } from '../generate-options.ts'
import { LlmAdapter } from '../llm-adapter.ts'
import { LlmError } from '../llm-error.ts'
import type { AdapterModelConfig, ModelInfo } from '../model-info.ts'
import type { FinishReason, StreamChunk } from '../stream-chunk.ts'
import type { TokenUsage } from '../token-usage.ts'

/**
 * One scripted reply. Either content (a string becomes one text block) with optional usage
 * and finish reason, raw `chunks` for full control of the stream, or an `error` to throw.
 */
export type ScriptedReply =
  | { content: string | readonly ContentBlock[]; usage?: TokenUsage; finishReason?: FinishReason }
  | { chunks: readonly StreamChunk[] | AsyncIterable<StreamChunk> }
  | { error: unknown }

/** What the model answers: one reply for every call, one per call in order, or a function. */
export type ScriptedResponses =
  | ScriptedReply
  | readonly ScriptedReply[]
  | ((request: GenerateOptions, callIndex: number) => ScriptedReply | Promise<ScriptedReply>)

/**
 * A model in the flat shape the HTTP adapters' `models` config takes
 * (`@warmfold/llm-openai-compatible`, `@warmfold/llm-anthropic`), so a host's model table can be
 * reused as is in tests.
 */
export type ScriptedModelConfig = AdapterModelConfig

/** Options of {@link ScriptedAdapter}. */
export interface ScriptedAdapterOptions {
  /**
   * Models the adapter knows, each either a {@link ModelInfo} (`reasoning: { efforts,
   * defaultEffort }`) or the HTTP adapters' flat {@link ScriptedModelConfig}; default:
   * `{ 'scripted-model': { contextWindow: 128000 } }`.
   */
  models?: Record<string, ModelInfo | ScriptedModelConfig>
  /** The replies. */
  responses: ScriptedResponses
}

/**
 * An adapter whose *content* is scripted, for tests: everything else (runtime, hooks, chunk
 * assembly) is the real path. It records every request it receives in `requests`.
 *
 * Text is streamed in two deltas per block and blocks are emitted start → deltas → end, so the
 * real assembler is exercised. The abort signal is checked before every chunk.
 */
export class ScriptedAdapter extends LlmAdapter {
  /** Every request received, in order, exactly as the adapter saw it. */
  readonly requests: GenerateOptions[] = []
  private readonly models: Record<string, ModelInfo>
  private readonly responses: ScriptedResponses

  constructor(options: ScriptedAdapterOptions) {
    super()
    this.models = options.models
      ? Object.fromEntries(Object.entries(options.models).map(([id, model]) => [id, modelInfoOf(id, model)]))
      : { 'scripted-model': { contextWindow: 128000 } }
    this.responses = options.responses
  }

  resolveModel(provider: string, model: string): ModelInfo {
    const info = this.models[model]
    if (!info) {
      throw new LlmError(
        'UNKNOWN_MODEL',
        `model "${model}" is not known to provider "${provider}"; known models: ${Object.keys(this.models).join(', ')}`,
        {
          provider,
          retryable: false,
        },
      )
    }
    return info
  }

  async *stream(options: GenerateOptions): AsyncGenerator<StreamChunk> {
    const callIndex = this.requests.length
    this.requests.push(options)
    const reply = await abortable(this.replyFor(options, callIndex), options.signal, callIndex)
    if ('error' in reply) throw reply.error
    const chunks = 'chunks' in reply ? reply.chunks : chunksFor(reply)
    for await (const chunk of chunks) {
      if (options.signal?.aborted) throw aborted(callIndex, options.signal)
      yield chunk
    }
  }

  private async replyFor(options: GenerateOptions, callIndex: number): Promise<ScriptedReply> {
    const responses = this.responses
    if (typeof responses === 'function') return responses(options, callIndex)
    if (Array.isArray(responses)) {
      const reply = (responses as readonly ScriptedReply[])[callIndex]
      if (!reply)
        throw new Error(`ScriptedAdapter: no reply scripted for call ${callIndex} (only ${responses.length} given)`)
      return reply
    }
    return responses as ScriptedReply
  }
}

/**
 * The {@link ModelInfo} of one `models` entry. The flat shape is converted as the HTTP adapters
 * convert it; an entry that mixes both shapes, or whose `defaultEffort` is not one of its
 * `efforts`, throws a `TypeError` naming the model, as those adapters reject it at load.
 */
function modelInfoOf(id: string, model: ModelInfo | ScriptedModelConfig): ModelInfo {
  const flat = 'efforts' in model || 'defaultEffort' in model
  if (!flat) return model
  const where = `ScriptedAdapter: models["${id}"]`
  if ('reasoning' in model)
    throw new TypeError(
      `${where} sets both reasoning and efforts/defaultEffort; use one shape: { reasoning: { efforts, ` +
        `defaultEffort } } or { efforts, defaultEffort }`,
    )
  const { efforts = [], defaultEffort, ...rest } = model as ScriptedModelConfig
  if (defaultEffort !== undefined && !efforts.includes(defaultEffort)) {
    throw new TypeError(
      `${where}.defaultEffort "${defaultEffort}" must be one of models["${id}"].efforts ` +
        `(${efforts.length ? efforts.join(', ') : 'none given'})`,
    )
  }
  if (!efforts.length) return rest
  return { ...rest, reasoning: { efforts: [...efforts], ...(defaultEffort === undefined ? {} : { defaultEffort }) } }
}

/**
 * Waits for `promise`, but rejects with `ABORTED` as soon as `signal` aborts (a real adapter's fetch does the same).
 */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, callIndex: number): Promise<T> {
  if (!signal) return promise
  if (signal.aborted) return Promise.reject(aborted(callIndex, signal))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted(callIndex, signal))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function aborted(callIndex: number, signal: AbortSignal): LlmError {
  return new LlmError('ABORTED', `scripted call ${callIndex} was aborted`, { cause: signal.reason, retryable: false })
}

/** The chunk stream that delivers `reply`'s content the way a real adapter would. */
export function chunksFor(reply: Extract<ScriptedReply, { content: unknown }>): StreamChunk[] {
  const blocks = typeof reply.content === 'string' ? [textBlock(reply.content)] : reply.content
  const chunks: StreamChunk[] = []
  blocks.forEach((block, index) => {
    switch (block.type) {
      case 'text':
      case 'reasoning': {
        const type = block.type === 'text' ? 'text-delta' : 'reasoning-delta'
        const half = Math.ceil(block.text.length / 2)
        chunks.push({ type: 'block-start', index, blockType: block.type })
        chunks.push({ type, index, delta: block.text.slice(0, half) }, { type, index, delta: block.text.slice(half) })
        break
      }
      case 'tool-call': {
        const half = Math.ceil(block.arguments.length / 2)
        chunks.push({ type: 'block-start', index, blockType: 'tool-call', id: block.id, name: block.name })
        chunks.push({ type: 'tool-call-delta', index, argumentsDelta: block.arguments.slice(0, half) })
        chunks.push({ type: 'tool-call-delta', index, argumentsDelta: block.arguments.slice(half) })
        break
      }
      default:
        throw new TypeError(`ScriptedAdapter: a model reply cannot contain a ${block.type} block`)
    }
    const { signature } = block
    chunks.push({ type: 'block-end', index, ...(signature === undefined ? {} : { signature }) })
  })
  if (reply.usage) chunks.push({ type: 'usage', usage: reply.usage })
  const reason = reply.finishReason ?? (blocks.some((block) => block.type === 'tool-call') ? 'tool-calls' : 'stop')
  chunks.push({ type: 'finish', reason })
  return chunks
}
