import type { ServerReply, SseEvent } from './anthropic-test-server.ts'

/** One block of a canned reply. `json` is the tool input exactly as the model streams it. */
export type ScriptBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly json: string }
  | { readonly type: 'redacted_thinking'; readonly data: string }

/** A canned reply: its blocks, stop reason and the usage of `message_start` / `message_delta`. */
export interface ScriptReply {
  readonly blocks: readonly ScriptBlock[]
  readonly stopReason?: string
  /** `message_start.message.usage`; default `{ input_tokens: 10, output_tokens: 1 }`. */
  readonly startUsage?: Record<string, unknown>
  /** `message_delta.usage`; default `{ output_tokens: 42 }` (cumulative). */
  readonly deltaUsage?: Record<string, unknown>
  readonly model?: string
}

/** Splits `text` in two halves (a second delta is always sent, possibly empty, as Anthropic may). */
function halves(text: string): [string, string] {
  const middle = Math.ceil(text.length / 2)
  return [text.slice(0, middle), text.slice(middle)]
}

/**
 * The SSE events of a complete reply, shaped like Anthropic's streaming docs: `message_start`
 * (with usage), a `ping`, then per block `content_block_start` / deltas / `content_block_stop`
 * (thinking ends with a `signature_delta`; tool input arrives as `input_json_delta`, the first
 * one empty), `message_delta` with the stop reason and cumulative usage, `message_stop`.
 */
export function replyEvents(reply: ScriptReply): SseEvent[] {
  const events: SseEvent[] = [
    messageStart(reply.startUsage ?? { input_tokens: 10, output_tokens: 1 }, reply.model),
    { event: 'ping', data: { type: 'ping' } },
  ]
  reply.blocks.forEach((block, index) => events.push(...blockEvents(block, index)))
  events.push(
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: reply.stopReason ?? 'end_turn', stop_sequence: null },
        usage: reply.deltaUsage ?? { output_tokens: 42 },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  )
  return events
}

/** A `message_start` event. */
export function messageStart(usage: Record<string, unknown>, model = 'claude-test'): SseEvent {
  return {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: 'msg_test',
        type: 'message',
        role: 'assistant',
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    },
  }
}

/** The start, delta and stop events of one block. */
export function blockEvents(block: ScriptBlock, index: number): SseEvent[] {
  const start = (content_block: unknown): SseEvent => ({
    event: 'content_block_start',
    data: { type: 'content_block_start', index, content_block },
  })
  const delta = (payload: unknown): SseEvent => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: payload },
  })
  const stop: SseEvent = { event: 'content_block_stop', data: { type: 'content_block_stop', index } }
  switch (block.type) {
    case 'text': {
      const [first, second] = halves(block.text)
      return [
        start({ type: 'text', text: '' }),
        delta({ type: 'text_delta', text: first }),
        delta({ type: 'text_delta', text: second }),
        stop,
      ]
    }
    case 'thinking': {
      const [first, second] = halves(block.thinking)
      return [
        start({ type: 'thinking', thinking: '', signature: '' }),
        delta({ type: 'thinking_delta', thinking: first }),
        delta({ type: 'thinking_delta', thinking: second }),
        delta({ type: 'signature_delta', signature: block.signature }),
        stop,
      ]
    }
    case 'tool_use': {
      const [first, second] = halves(block.json)
      return [
        start({ type: 'tool_use', id: block.id, name: block.name, input: {} }),
        delta({ type: 'input_json_delta', partial_json: '' }),
        delta({ type: 'input_json_delta', partial_json: first }),
        delta({ type: 'input_json_delta', partial_json: second }),
        stop,
      ]
    }
    case 'redacted_thinking':
      return [start({ type: 'redacted_thinking', data: block.data }), stop]
  }
}

/** A 200 reply streaming `reply`. */
export function streamReply(reply: ScriptReply): ServerReply {
  return { kind: 'stream', events: replyEvents(reply) }
}

/** An Anthropic error reply: `{ type: 'error', error: { type, message } }` with `status`. */
export function errorReply(
  status: number,
  type: string,
  message: string,
  headers?: Record<string, string>,
): ServerReply {
  return { kind: 'status', status, body: { type: 'error', error: { type, message } }, ...(headers ? { headers } : {}) }
}

/** An in-stream `error` event. */
export function errorEvent(type: string, message: string): SseEvent {
  return { event: 'error', data: { type: 'error', error: { type, message } } }
}
