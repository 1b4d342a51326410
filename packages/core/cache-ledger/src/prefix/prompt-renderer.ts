import type { GenerateOptions } from '@warmfold/llm'
import type { PromptLayout, PromptSegment } from './prompt-layout.ts'
import { layoutFrom } from './prompt-layout.ts'
import { RenderOrder } from './render-order.ts'
import { SegmentInterner } from './segment-interner.ts'

/**
 * Renders `ctx.llm` requests into segment layouts: each {@link RenderOrder} segment's value as the
 * serializer it is given writes it (`canonicalJson` of `@warmfold/llm`, which this module does not
 * import: that package's entry loads cordis). Equal content gives equal bytes, so the longest
 * common byte prefix of two prompts is what a provider cache could reuse. Segment texts are
 * interned, so comparing two prompts costs O(segments), not O(characters).
 */
export class PromptRenderer {
  private readonly order: RenderOrder<{ readonly text: string; readonly id: number }>

  /** @param canonicalJson deterministic JSON of prompt data: `canonicalJson` of `@warmfold/llm`. */
  constructor(canonicalJson: (value: unknown) => string) {
    const interner = new SegmentInterner()
    this.order = new RenderOrder((value) => interner.intern(canonicalJson(value)))
  }

  layout(request: Pick<GenerateOptions, 'tools' | 'system' | 'messages'>): PromptLayout {
    const segments: PromptSegment[] = this.order
      .toolSegments(request)
      .map((segment, index) => ({ part: 'tools', index, ...segment }))
    const system = this.order.systemSegment(request)
    if (system) segments.push({ part: 'system', index: 0, ...system })
    const headSegments = segments.length
    request.messages.forEach((message, index) => {
      this.order
        .messageSegments(message)
        .forEach((segment, blockIndex) => segments.push({ part: 'message', index, blockIndex, ...segment }))
    })
    return layoutFrom(segments, headSegments)
  }
}
