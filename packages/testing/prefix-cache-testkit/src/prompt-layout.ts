import type { ContentBlock, GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import { canonicalJson } from '@warmfold/llm'

/** Which part of a prompt a segment belongs to. */
export type PromptPart = 'tools' | 'system' | 'message'

/**
 * One content block of the rendered prompt: a tool definition, the system prompt, or one
 * content block of one message (the first block of a message carries its role).
 */
export interface PromptSegment {
  readonly part: PromptPart
  /** Index of the tool, or of the message. */
  readonly index: number
  /** Index of the content block inside its message. */
  readonly blockIndex?: number
  /** The canonical bytes of the segment. */
  readonly text: string
  /** Interned id: equal ids ⇔ equal text. */
  readonly id: number
}

/** A request's prompt as segments, in order: tools, system, then each message's blocks. */
export interface PromptLayout {
  readonly segments: readonly PromptSegment[]
  /** Characters before each segment; `offsets[segments.length]` is the prompt length. */
  readonly offsets: readonly number[]
  /** Index of the first message segment (tools and system come before it). */
  readonly headSegments: number
}

/**
 * Renders requests into segment layouts. The rendered prompt is the canonical serialization
 * of tools, system and each message, in that order; equal content gives equal bytes, so the
 * longest common byte prefix of two prompts is what a provider cache could reuse.
 *
 * Segment texts are cached per frozen message and interned, so a long session is serialized
 * once and comparing two prompts costs O(segments), not O(characters).
 */
export class PromptRenderer {
  private readonly ids = new Map<string, number>()
  private readonly messages = new WeakMap<Message, readonly { text: string; id: number }[]>()
  private readonly tools = new WeakMap<readonly ToolDefinition[], readonly { text: string; id: number }[]>()

  /** The layout of `request`'s prompt. */
  layout(request: GenerateOptions): PromptLayout {
    const segments: PromptSegment[] = []
    ;(request.tools ? this.renderTools(request.tools) : []).forEach((segment, index) =>
      segments.push({ part: 'tools', index, ...segment }),
    )
    if (request.system)
      segments.push({ part: 'system', index: 0, ...this.intern(canonicalJson({ system: request.system })) })
    const headSegments = segments.length
    request.messages.forEach((message, index) => {
      this.renderMessage(message).forEach((segment, blockIndex) =>
        segments.push({ part: 'message', index, blockIndex, ...segment }),
      )
    })
    const offsets = [0]
    for (const segment of segments) offsets.push((offsets.at(-1) as number) + segment.text.length)
    return { segments, offsets, headSegments }
  }

  private renderTools(tools: readonly ToolDefinition[]): readonly { text: string; id: number }[] {
    let rendered = this.tools.get(tools)
    if (!rendered) {
      rendered = tools.map((tool) => this.intern(canonicalJson({ tool })))
      // Like messages: only a frozen list cannot change under the cache.
      if (Object.isFrozen(tools)) this.tools.set(tools, rendered)
    }
    return rendered
  }

  private renderMessage(message: Message): readonly { text: string; id: number }[] {
    let rendered = this.messages.get(message)
    if (!rendered) {
      rendered = message.content.map((block: ContentBlock, index) =>
        this.intern(index === 0 ? canonicalJson({ role: message.role, block }) : canonicalJson({ block })),
      )
      if (Object.isFrozen(message)) this.messages.set(message, rendered)
    }
    return rendered
  }

  private intern(text: string): { text: string; id: number } {
    let id = this.ids.get(text)
    if (id === undefined) {
      id = this.ids.size
      this.ids.set(text, id)
    }
    return { text, id }
  }
}

/** Length of the common prefix of two strings, in UTF-16 code units. */
export function commonPrefixLength(left: string, right: string): number {
  const limit = Math.min(left.length, right.length)
  let index = 0
  while (index < limit && left.charCodeAt(index) === right.charCodeAt(index)) index++
  return index
}
