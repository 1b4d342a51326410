import type { ContentBlock, GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'

/**
 * The segments of `ctx.llm` requests in provider render order, each made once by `segment`: the
 * value `{ tool }` per tool, `{ system }` for the system prompt (none when it is empty), and per
 * message block `{ role, block }` for the first block and `{ block }` for the others. Frozen tools
 * and messages (everything `ctx.llm` sends is frozen) are remembered by identity, so a long
 * session makes each new message's segments once; mutable ones are made again every time.
 */
export class RenderOrder<T> {
  private readonly tools = new WeakMap<ToolDefinition, T>()
  private readonly messages = new WeakMap<Message, readonly T[]>()
  private lastSystem?: { readonly text: string; readonly segment: T }

  /** @param segment makes one segment from the value it stands for. */
  constructor(private readonly segment: (value: object) => T) {}

  /** Each tool's segment, in order (by tool, not by list: the runtime copies the list into every request). */
  toolSegments(request: Pick<GenerateOptions, 'tools'>): T[] {
    return (request.tools ?? []).map((tool) => {
      let made = this.tools.get(tool)
      if (made === undefined) {
        made = this.segment({ tool })
        if (Object.isFrozen(tool)) this.tools.set(tool, made)
      }
      return made
    })
  }

  /** The system prompt's segment, or undefined when the request has none (or an empty one). */
  systemSegment(request: Pick<GenerateOptions, 'system'>): T | undefined {
    const text = request.system
    if (!text) return undefined
    if (this.lastSystem?.text !== text) this.lastSystem = { text, segment: this.segment({ system: text }) }
    return this.lastSystem.segment
  }

  /** One segment per content block of `message`. */
  messageSegments(message: Message): readonly T[] {
    let made = this.messages.get(message)
    if (!made) {
      made = message.content.map((block: ContentBlock, index) =>
        this.segment(index === 0 ? { role: message.role, block } : { block }),
      )
      if (Object.isFrozen(message)) this.messages.set(message, made)
    }
    return made
  }
}
