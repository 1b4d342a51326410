import { NamedEvent } from '@warmfold/test-utils'

/**
 * Minimal canned replies in the exact wire shapes (copied, not imported, from the direct
 * adapters' tests): OpenAI chat-completions chunks (bare `data:` lines, `[DONE]`), and Anthropic
 * Messages events (named `event:` lines, no `[DONE]`).
 */

const BASE = {
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1767225600,
  system_fingerprint: 'fp_test',
} as const

/** A chat-completions turn: reasoning, text and tool calls (arguments streamed in two pieces, raw). */
export interface ChatTurn {
  readonly reasoning?: string
  readonly text?: string
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
  readonly finishReason?: string
}

/** One chunk for choice 0. */
export function chatChunk(
  model: string,
  delta: object,
  finishReason: string | null = null,
  extra: object = {},
): object {
  return { ...BASE, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...extra }
}

function halves(text: string): string[] {
  if (text.length < 2) return [text]
  const middle = Math.floor(text.length / 2)
  return [text.slice(0, middle), text.slice(middle)]
}

/** The content chunks of a turn, without the finish. */
export function chatContent(model: string, turn: ChatTurn): object[] {
  const chunks: object[] = [chatChunk(model, { role: 'assistant', content: '' })]
  for (const piece of turn.reasoning ? halves(turn.reasoning) : [])
    chunks.push(chatChunk(model, { content: null, reasoning_content: piece }))
  for (const piece of turn.text ? halves(turn.text) : []) chunks.push(chatChunk(model, { content: piece }))
  for (const [index, call] of (turn.toolCalls ?? []).entries()) {
    chunks.push(
      chatChunk(model, {
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    )
    for (const piece of halves(call.arguments))
      chunks.push(chatChunk(model, { tool_calls: [{ index, function: { arguments: piece } }] }))
  }
  return chunks
}

/** OpenAI usage with `prompt_tokens_details.cached_tokens` (omitted when `cached` is undefined). */
export function openaiUsage(prompt: number, cached: number | undefined, completion: number): object {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
  }
}

/** An OpenAI stream: content, the finish chunk, then the trailing usage chunk (`choices: []`). */
export function chatStream(model: string, turn: ChatTurn, usage: object = openaiUsage(20, 0, 5)): object[] {
  const finish = turn.finishReason ?? (turn.toolCalls?.length ? 'tool_calls' : 'stop')
  return [...chatContent(model, turn), chatChunk(model, {}, finish), { ...BASE, model, choices: [], usage }]
}

/** One block of an Anthropic reply; `json` is the tool input exactly as streamed. */
export type AnthropicBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'thinking'; readonly thinking: string; readonly signature: string }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly json: string }

/** An Anthropic reply. */
export interface AnthropicTurn {
  readonly blocks: readonly AnthropicBlock[]
  readonly stopReason?: string
  readonly startUsage?: Record<string, unknown>
  readonly deltaUsage?: Record<string, unknown>
}

function event(name: string, data: Record<string, unknown>): NamedEvent {
  return new NamedEvent(name, { type: name, ...data })
}

/** The events of a complete reply, shaped like Anthropic's streaming docs. */
export function anthropicStream(turn: AnthropicTurn): NamedEvent[] {
  const usage = turn.startUsage ?? { input_tokens: 10, output_tokens: 1 }
  const events = [
    event('message_start', {
      message: {
        id: 'msg_test',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'claude-test',
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    }),
    event('ping', {}),
  ]
  turn.blocks.forEach((block, index) => events.push(...anthropicBlock(block, index)))
  events.push(
    event('message_delta', {
      delta: { stop_reason: turn.stopReason ?? 'end_turn', stop_sequence: null },
      usage: turn.deltaUsage ?? { output_tokens: 42 },
    }),
    event('message_stop', {}),
  )
  return events
}

/** The start, delta and stop events of one block. */
export function anthropicBlock(block: AnthropicBlock, index: number): NamedEvent[] {
  const start = (content_block: unknown) => event('content_block_start', { index, content_block })
  const delta = (payload: unknown) => event('content_block_delta', { index, delta: payload })
  const stop = event('content_block_stop', { index })
  switch (block.type) {
    case 'text':
      return [
        start({ type: 'text', text: '' }),
        ...halves(block.text).map((text) => delta({ type: 'text_delta', text })),
        stop,
      ]
    case 'thinking':
      return [
        start({ type: 'thinking', thinking: '', signature: '' }),
        ...halves(block.thinking).map((thinking) => delta({ type: 'thinking_delta', thinking })),
        delta({ type: 'signature_delta', signature: block.signature }),
        stop,
      ]
    case 'tool_use':
      return [
        start({ type: 'tool_use', id: block.id, name: block.name, input: {} }),
        delta({ type: 'input_json_delta', partial_json: '' }),
        ...halves(block.json).map((partial_json) => delta({ type: 'input_json_delta', partial_json })),
        stop,
      ]
  }
}

/** An Anthropic error body `{ type: 'error', error: { type, message } }`. */
export function anthropicError(type: string, message: string): object {
  return { type: 'error', error: { type, message } }
}
