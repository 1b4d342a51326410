import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages'

/**
 * A fresh predicate for one stream: whether an event makes progress. Progress is content (a
 * non-empty text, thinking, signature or tool-input delta; a block that starts with content or
 * is a tool call), usage that differs from the last usage seen, or the end of the message (the
 * first stop reason, `message_stop`). `ping`, `content_block_stop`, empty deltas, repeated
 * usage and unknown events are not: a server that sends only those is stalled.
 */
export function streamProgress(): (event: RawMessageStreamEvent) => boolean {
  // The last usage of each event kind, as JSON: alternating two stale usages is no progress.
  const usage = { message_start: undefined as string | undefined, message_delta: undefined as string | undefined }
  let stopped = false
  const usageMoved = (kind: keyof typeof usage, value: unknown): boolean => {
    if (value === null || value === undefined) return false
    const text = JSON.stringify(value)
    if (text === usage[kind]) return false
    usage[kind] = text
    return true
  }
  return (event) => {
    switch (event.type) {
      case 'message_start':
        return usageMoved('message_start', event.message?.usage)
      case 'message_delta': {
        const stopsNow = !stopped && Boolean(event.delta?.stop_reason)
        if (stopsNow) stopped = true
        return usageMoved('message_delta', event.usage) || stopsNow
      }
      case 'message_stop':
        return true
      case 'content_block_start': {
        const block = event.content_block
        if (block.type === 'text') return block.text !== ''
        if (block.type === 'thinking') return block.thinking !== ''
        // tool_use, redacted_thinking, server tool blocks: the start carries the block itself.
        return true
      }
      case 'content_block_delta': {
        const { delta } = event
        switch (delta.type) {
          case 'text_delta':
            return delta.text !== ''
          case 'thinking_delta':
            return delta.thinking !== ''
          case 'input_json_delta':
            return delta.partial_json !== ''
          case 'signature_delta':
            return delta.signature !== ''
          case 'citations_delta':
            return true
          default:
            return false
        }
      }
      default:
        return false
    }
  }
}
