import type { TokenUsage } from './token-usage.ts'

/** Why generation stopped. */
export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens' | 'content-filter' | 'aborted' | 'error'

/** The kinds of block a stream can open. */
export type StreamBlockType = 'text' | 'reasoning' | 'tool-call'

/**
 * One event of an adapter's output stream. Blocks are addressed by `index` (their position
 * in the final content) and may interleave: a `text-delta` for block 2 can arrive between
 * two `tool-call-delta`s for block 1.
 */
export type StreamChunk =
  /** A block opens. For tool calls, `id` and `name` may arrive here or on the first delta. */
  | {
      readonly type: 'block-start'
      readonly index: number
      readonly blockType: StreamBlockType
      readonly id?: string
      readonly name?: string
    }
  /** Text appended to a text block. */
  | { readonly type: 'text-delta'; readonly index: number; readonly delta: string }
  /** Text appended to a reasoning block. */
  | { readonly type: 'reasoning-delta'; readonly index: number; readonly delta: string }
  /** Raw argument text appended to a tool call; `id`/`name` when the provider sends them here. */
  | {
      readonly type: 'tool-call-delta'
      readonly index: number
      readonly id?: string
      readonly name?: string
      readonly argumentsDelta: string
    }
  /**
   * A block is complete. `signature` is the provider's opaque token for the block, replayed
   * with it: a reasoning block's (Anthropic thinking, OpenAI Responses reasoning item), or a
   * text or tool-call block's (Gemini `thoughtSignature`).
   */
  | { readonly type: 'block-end'; readonly index: number; readonly signature?: string }
  /** Usage for the whole call; a later usage chunk replaces an earlier one. */
  | { readonly type: 'usage'; readonly usage: TokenUsage }
  /** The last chunk of a successful stream. */
  | { readonly type: 'finish'; readonly reason: FinishReason }
