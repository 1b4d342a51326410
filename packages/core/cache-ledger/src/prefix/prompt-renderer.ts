import type { ContentBlock, GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import type { PromptLayout, PromptSegment } from './prompt-layout.ts'
import { layoutFrom } from './prompt-layout.ts'
import { SegmentInterner } from './segment-interner.ts'

/** A rendered segment before it is placed in a prompt. */
type Rendered = { readonly text: string; readonly id: number }

/**
 * Renders `ctx.llm` requests into segment layouts, one segment per tool, the system prompt and
 * each content block of each message: `canonicalJson({ tool })`, `canonicalJson({ system })`,
 * `canonicalJson({ role, block })` for a message's first block and `canonicalJson({ block })` for
 * the others, where `canonicalJson` is the serializer it is given (`canonicalJson` of
 * `@warmfold/llm`, which this module does not import: that package's entry loads cordis). Equal
 * content gives equal bytes, so the longest common byte prefix of two prompts is what a provider
 * cache could reuse.
 *
 * Segment texts are cached per frozen message and interned, so a long session is serialized
 * once and comparing two prompts costs O(segments), not O(characters).
 */
export class PromptRenderer {
  private readonly interner = new SegmentInterner()
  private readonly messages = new WeakMap<Message, readonly Rendered[]>()
  private readonly tools = new WeakMap<readonly ToolDefinition[], readonly Rendered[]>()

  /** @param canonicalJson deterministic JSON of prompt data: `canonicalJson` of `@warmfold/llm`. */
  constructor(private readonly canonicalJson: (value: unknown) => string) {}

  /** The layout of `request`'s prompt. */
  layout(request: Pick<GenerateOptions, 'tools' | 'system' | 'messages'>): PromptLayout {
    const segments: PromptSegment[] = []
    ;(request.tools ? this.renderTools(request.tools) : []).forEach((segment, index) =>
      segments.push({ part: 'tools', index, ...segment }),
    )
    if (request.system)
      segments.push({
        part: 'system',
        index: 0,
        ...this.interner.intern(this.canonicalJson({ system: request.system })),
      })
    const headSegments = segments.length
    request.messages.forEach((message, index) => {
      this.renderMessage(message).forEach((segment, blockIndex) =>
        segments.push({ part: 'message', index, blockIndex, ...segment }),
      )
    })
    return layoutFrom(segments, headSegments)
  }

  private renderTools(tools: readonly ToolDefinition[]): readonly Rendered[] {
    let rendered = this.tools.get(tools)
    if (!rendered) {
      rendered = tools.map((tool) => this.interner.intern(this.canonicalJson({ tool })))
      // Like messages: only a frozen list cannot change under the cache.
      if (Object.isFrozen(tools)) this.tools.set(tools, rendered)
    }
    return rendered
  }

  private renderMessage(message: Message): readonly Rendered[] {
    let rendered = this.messages.get(message)
    if (!rendered) {
      rendered = message.content.map((block: ContentBlock, index) =>
        this.interner.intern(this.canonicalJson(index === 0 ? { role: message.role, block } : { block })),
      )
      if (Object.isFrozen(message)) this.messages.set(message, rendered)
    }
    return rendered
  }
}
