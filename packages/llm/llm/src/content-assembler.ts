import type { ContentBlock } from './content-block.ts'
import { reasoningBlock, textBlock, toolCallBlock } from './content-block.ts'
import { LlmError } from './llm-error.ts'
import type { FinishReason, StreamBlockType, StreamChunk } from './stream-chunk.ts'
import type { TokenUsage } from './token-usage.ts'

/** A finished call: its content blocks in index order, usage, and why it stopped. */
export interface GenerateResult {
  readonly content: readonly ContentBlock[]
  readonly usage?: TokenUsage
  readonly finishReason: FinishReason
}

interface OpenBlock {
  type: StreamBlockType
  text: string
  id?: string
  name?: string
  signature?: string
}

/**
 * Assembles a chunk stream into content blocks. Blocks may interleave by index; each block's
 * text is the concatenation of its deltas in arrival order, and tool-call arguments stay the
 * model's raw string.
 */
export class ContentAssembler {
  private readonly blocks = new Map<number, OpenBlock>()
  private usageValue: TokenUsage | undefined
  private finishValue: FinishReason | undefined

  /**
   * Feeds one chunk.
   * @throws LlmError `INVALID_RESPONSE` when a chunk contradicts the block it addresses.
   */
  push(chunk: StreamChunk): void {
    switch (chunk.type) {
      case 'block-start': {
        const block = this.open(chunk.index, chunk.blockType)
        if (chunk.id !== undefined) block.id = chunk.id
        if (chunk.name !== undefined) block.name = chunk.name
        return
      }
      case 'text-delta':
        this.open(chunk.index, 'text').text += chunk.delta
        return
      case 'reasoning-delta':
        this.open(chunk.index, 'reasoning').text += chunk.delta
        return
      case 'tool-call-delta': {
        const block = this.open(chunk.index, 'tool-call')
        if (chunk.id !== undefined) block.id = chunk.id
        if (chunk.name !== undefined) block.name = (block.name ?? '') + chunk.name
        block.text += chunk.argumentsDelta
        return
      }
      case 'block-end': {
        const block = this.blocks.get(chunk.index)
        if (!block) throw invalid(`block-end for block ${chunk.index}, which never started`)
        if (chunk.signature !== undefined) block.signature = chunk.signature
        return
      }
      case 'usage':
        this.usageValue = chunk.usage
        return
      case 'finish':
        this.finishValue = chunk.reason
        return
    }
  }

  /** Whether a `finish` chunk has arrived. */
  get finished(): boolean {
    return this.finishValue !== undefined
  }

  /** The blocks assembled so far, in index order (usable for partial output after an abort). */
  content(): ContentBlock[] {
    return [...this.blocks.entries()]
      .toSorted(([left], [right]) => left - right)
      .map(([index, block]) => finishBlock(index, block))
  }

  /**
   * The finished result.
   * @throws LlmError `STREAM_INCOMPLETE` when the stream never sent `finish`.
   */
  result(): GenerateResult {
    if (this.finishValue === undefined) {
      throw new LlmError(
        'STREAM_INCOMPLETE',
        'the model stream ended without a finish event; the reply is incomplete and was not used',
      )
    }
    return { content: this.content(), usage: this.usageValue, finishReason: this.finishValue }
  }

  private open(index: number, type: StreamBlockType): OpenBlock {
    const existing = this.blocks.get(index)
    if (existing) {
      if (existing.type !== type)
        throw invalid(`block ${index} started as ${existing.type} but received a ${type} chunk`)
      return existing
    }
    const block: OpenBlock = { type, text: '' }
    this.blocks.set(index, block)
    return block
  }
}

function finishBlock(index: number, block: OpenBlock): ContentBlock {
  switch (block.type) {
    case 'text':
      return textBlock(block.text, block.signature)
    case 'reasoning':
      return reasoningBlock(block.text, block.signature)
    case 'tool-call':
      if (!block.id || !block.name) throw invalid(`tool call at block ${index} has no ${block.id ? 'name' : 'id'}`)
      return toolCallBlock(block.id, block.name, block.text, block.signature)
  }
}

function invalid(message: string): LlmError {
  return new LlmError('INVALID_RESPONSE', `invalid model stream: ${message}`)
}
