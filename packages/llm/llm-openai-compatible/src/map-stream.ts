import type { FinishReason, StreamChunk } from '@warmfold/llm'
import type { SecretRedactor } from '@warmfold/llm/adapter'
import { LlmError } from '@warmfold/llm'
import { secretRedactor } from '@warmfold/llm/adapter'
import type { Dialect } from './config.ts'
import type { ChatUsage, LlamaTimings } from './map-usage.ts'
import { mapUsage } from './map-usage.ts'

/** One streamed tool call fragment, addressed by `index`. */
export interface ChatToolCallDelta {
  readonly index?: number
  readonly id?: string | null
  readonly type?: string
  readonly function?: { readonly name?: string | null; readonly arguments?: string | null } | null
}

/**
 * One `chat.completion.chunk` as OpenAI-compatible servers stream it, with the extensions this
 * adapter reads: `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (newer vLLM,
 * OpenRouter) on the delta, and llama.cpp's top-level `timings`.
 */
export interface ChatChunk {
  readonly choices?: ReadonlyArray<{
    readonly index?: number
    readonly delta?: {
      readonly content?: string | null
      readonly reasoning_content?: string | null
      readonly reasoning?: string | null
      readonly tool_calls?: readonly ChatToolCallDelta[] | null
    } | null
    readonly finish_reason?: string | null
  }> | null
  readonly usage?: ChatUsage | null
  readonly timings?: LlamaTimings | null
}

interface OpenBlock {
  readonly index: number
  id?: string
  name?: string
}

const FINISH_REASONS: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'max-tokens',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  content_filter: 'content-filter',
}

/**
 * Turns chat completion chunks into {@link StreamChunk}s. Each block (the reasoning, the text,
 * each tool call by its `index`) gets a stable index in order of first appearance and a
 * `block-start` when it first appears; all blocks end, in index order, when the stream ends,
 * followed by `usage` (when reported) and `finish`.
 */
export class StreamMapper {
  private readonly blocks = new Map<string, OpenBlock>()
  private finishReason: FinishReason | undefined
  private usage: ChatUsage | undefined
  private timings: LlamaTimings | undefined
  private reportedUsage: string | undefined
  private chunkCount = 0
  private progressCount = 0

  /**
   * @param secrets removes the API key; the usage's `raw` object passes through it, so a server
   *   that echoes the key into usage cannot leak it into the session log.
   */
  constructor(
    private readonly provider: string,
    private readonly dialect: Dialect,
    private readonly secrets: SecretRedactor = secretRedactor(undefined),
  ) {}

  /**
   * How many chunks so far carried progress: non-empty content or reasoning, a tool call's id,
   * name or argument text, usage (or llama.cpp timings) that differ from the last ones, or the
   * first finish reason. Empty chunks (`delta: {}`, `choices: []`, `content: ""`) and repeats
   * do not count; the adapter's idle timeout restarts only when this grows.
   */
  get progress(): number {
    return this.progressCount
  }

  /**
   * Maps one chunk.
   * @throws LlmError `SERVER` when DeepSeek reports `insufficient_system_resource` (it
   *   interrupted generation; the partial reply must not pass as complete).
   */
  push(chunk: ChatChunk): StreamChunk[] {
    this.chunkCount += 1
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage
    if (chunk.timings && typeof chunk.timings === 'object') this.timings = chunk.timings
    const reported =
      this.usage === undefined && this.timings === undefined
        ? undefined
        : JSON.stringify([this.usage ?? null, this.timings ?? null])
    const usageMoved = reported !== this.reportedUsage
    this.reportedUsage = reported
    const finishedBefore = this.finishReason !== undefined
    const out = this.mapChoice(chunk)
    if (usageMoved || (!finishedBefore && this.finishReason !== undefined) || out.some(carriesProgress))
      this.progressCount += 1
    return out
  }

  private mapChoice(chunk: ChatChunk): StreamChunk[] {
    const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0)
    if (!choice) return []
    const out: StreamChunk[] = []
    const delta = choice.delta
    if (delta) {
      const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning)
      if (reasoning !== undefined)
        out.push({ type: 'reasoning-delta', index: this.open('reasoning', 'reasoning', out).index, delta: reasoning })
      const text = nonEmpty(delta.content)
      if (text !== undefined) out.push({ type: 'text-delta', index: this.open('text', 'text', out).index, delta: text })
      for (const [position, call] of (delta.tool_calls ?? []).entries()) this.toolCall(call, position, out)
    }
    if (choice.finish_reason) this.finish(choice.finish_reason)
    return out
  }

  /**
   * The closing chunks: every block's `block-end`, the usage, and `finish`.
   * @throws LlmError `STREAM_INCOMPLETE` when no chunk carried a `finish_reason`.
   */
  end(): StreamChunk[] {
    if (this.finishReason === undefined) {
      throw new LlmError(
        'STREAM_INCOMPLETE',
        `${this.provider}: the response stream ended after ${this.chunkCount} chunk(s) without a finish_reason; ` +
          `the reply is incomplete and was not used`,
        { provider: this.provider },
      )
    }
    const out: StreamChunk[] = [...this.blocks.values()].map((block) => ({ type: 'block-end', index: block.index }))
    if (this.usage !== undefined || this.timings !== undefined) {
      const usage = mapUsage(this.usage, this.timings, this.dialect)
      out.push({
        type: 'usage',
        usage: usage.raw === undefined ? usage : { ...usage, raw: this.secrets.value(usage.raw) },
      })
    }
    out.push({ type: 'finish', reason: this.finishReason })
    return out
  }

  private toolCall(call: ChatToolCallDelta, position: number, out: StreamChunk[]): void {
    const key = `tool:${typeof call.index === 'number' ? call.index : position}`
    const isNew = !this.blocks.has(key)
    const block = this.open(key, 'tool-call', out)
    // Some servers repeat the id and the full name on every fragment; the assembler appends
    // name pieces, so each is sent once: the first non-empty value wins.
    const id = block.id === undefined ? nonEmpty(call.id) : undefined
    const name = block.name === undefined ? nonEmpty(call.function?.name) : undefined
    if (id !== undefined) block.id = id
    if (name !== undefined) block.name = name
    const argumentsDelta = call.function?.arguments ?? ''
    if (isNew) {
      out.push({
        type: 'block-start',
        index: block.index,
        blockType: 'tool-call',
        ...(id === undefined ? {} : { id }),
        ...(name === undefined ? {} : { name }),
      })
      if (argumentsDelta !== '') out.push({ type: 'tool-call-delta', index: block.index, argumentsDelta })
      return
    }
    if (argumentsDelta !== '' || id !== undefined || name !== undefined) {
      out.push({
        type: 'tool-call-delta',
        index: block.index,
        argumentsDelta,
        ...(id === undefined ? {} : { id }),
        ...(name === undefined ? {} : { name }),
      })
    }
  }

  private open(key: string, blockType: 'text' | 'reasoning' | 'tool-call', out: StreamChunk[]): OpenBlock {
    const existing = this.blocks.get(key)
    if (existing) return existing
    const block: OpenBlock = { index: this.blocks.size }
    this.blocks.set(key, block)
    if (blockType !== 'tool-call') out.push({ type: 'block-start', index: block.index, blockType })
    return block
  }

  private finish(reason: string): void {
    if (reason === 'insufficient_system_resource') {
      throw new LlmError(
        'SERVER',
        `${this.provider}: the server interrupted generation (finish_reason "insufficient_system_resource"); the ` +
          `reply is incomplete`,
        {
          provider: this.provider,
          retryable: true,
        },
      )
    }
    const hasToolCalls = [...this.blocks.keys()].some((key) => key.startsWith('tool:'))
    // An unknown reason is a stop of some kind; the tool calls, if any, decide which.
    this.finishReason = FINISH_REASONS[reason] ?? (hasToolCalls ? 'tool-calls' : 'stop')
  }
}

/** Whether a mapped chunk carries something new: text, reasoning, or a tool call's id, name or arguments. */
function carriesProgress(chunk: StreamChunk): boolean {
  switch (chunk.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return chunk.delta !== ''
    case 'tool-call-delta':
      return chunk.argumentsDelta !== '' || chunk.id !== undefined || chunk.name !== undefined
    case 'block-start':
      return chunk.id !== undefined || chunk.name !== undefined
    default:
      return false
  }
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}
