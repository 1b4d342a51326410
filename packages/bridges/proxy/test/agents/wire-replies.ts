import type { Reply, SseItem } from '@warmfold/test-utils'
import { NamedEvent } from '@warmfold/test-utils'

/** One scripted model turn: a text answer, or tool calls (arguments as objects). */
export type ScriptedTurn =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'tools'; readonly calls: readonly ScriptedCall[] }

/** One scripted tool call. */
export interface ScriptedCall {
  readonly id: string
  readonly name: string
  readonly args: Readonly<Record<string, unknown>>
}

/** Token counts a reply reports (the agent decides when to compact from them). */
export interface ScriptedUsage {
  readonly input: number
  readonly output: number
}

/** An OpenAI Chat Completions answer: SSE chunks with a usage chunk when `stream`, else one JSON body. */
export function chatReply(turn: ScriptedTurn, stream: boolean, usage: ScriptedUsage, model: string): Reply {
  const id = 'chatcmpl-scripted'
  const created = 1_700_000_000
  const usageJson = {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  }
  const finish = turn.kind === 'text' ? 'stop' : 'tool_calls'
  const calls = (turn.kind === 'tools' ? turn.calls : []).map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args) },
  }))
  const toolCalls = calls.map((call, index) => ({ index, ...call }))
  if (!stream) {
    const message =
      turn.kind === 'text'
        ? { role: 'assistant', content: turn.text }
        : { role: 'assistant', content: null, tool_calls: calls }
    const body = {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, finish_reason: finish }],
    }
    return { status: 200, body: { ...body, usage: usageJson } }
  }
  const chunk = (delta: object, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  })
  const sse: SseItem[] = [chunk({ role: 'assistant', content: '' })]
  if (turn.kind === 'text') sse.push(chunk({ content: turn.text }))
  else sse.push(chunk({ tool_calls: toolCalls }))
  sse.push(chunk({}, finish))
  sse.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageJson })
  return { sse }
}

/** An OpenAI Responses answer: the SSE event sequence of one response (message or function_call items). */
export function responsesReply(turn: ScriptedTurn, usage: ScriptedUsage, model: string, serial: number): Reply {
  const responseId = `resp_scripted_${serial}`
  const items: Array<Record<string, unknown>> =
    turn.kind === 'text'
      ? [
          {
            type: 'message',
            id: `msg_${serial}`,
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: turn.text, annotations: [] }],
          },
        ]
      : turn.calls.map((call, index) => ({
          type: 'function_call',
          id: `fc_${serial}_${index}`,
          status: 'completed',
          call_id: call.id,
          name: call.name,
          arguments: JSON.stringify(call.args),
        }))
  const base = { id: responseId, object: 'response', created_at: 1_700_000_000, model }
  const sse: SseItem[] = [
    new NamedEvent('response.created', {
      type: 'response.created',
      response: { ...base, status: 'in_progress', output: [] },
    }),
  ]
  items.forEach((item, index) => {
    const started = item.type === 'message' ? { ...item, status: 'in_progress', content: [] } : item
    sse.push(
      new NamedEvent('response.output_item.added', {
        type: 'response.output_item.added',
        output_index: index,
        item: started,
      }),
    )
    if (turn.kind === 'text')
      sse.push(
        new NamedEvent('response.output_text.delta', {
          type: 'response.output_text.delta',
          item_id: item.id,
          output_index: index,
          content_index: 0,
          delta: turn.text,
        }),
      )
    sse.push(
      new NamedEvent('response.output_item.done', { type: 'response.output_item.done', output_index: index, item }),
    )
  })
  const usageJson = {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output,
  }
  sse.push(
    new NamedEvent('response.completed', {
      type: 'response.completed',
      response: { ...base, status: 'completed', output: items, usage: usageJson },
    }),
  )
  return { sse, done: false }
}

/** A Gemini answer: `streamGenerateContent?alt=sse` chunks when `stream`, else one `generateContent` body. */
export function geminiReply(turn: ScriptedTurn, stream: boolean, usage: ScriptedUsage, model: string): Reply {
  const parts =
    turn.kind === 'text'
      ? [{ text: turn.text }]
      : turn.calls.map((call) => ({ functionCall: { id: call.id, name: call.name, args: call.args } }))
  const body = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output,
      totalTokenCount: usage.input + usage.output,
    },
    modelVersion: model,
    responseId: 'scripted',
  }
  if (!stream) return { status: 200, body }
  return { sse: [body], done: false }
}

/** An Anthropic Messages answer: the SSE events of one message when `stream`, else one JSON body. */
export function anthropicReply(
  turn: ScriptedTurn,
  stream: boolean,
  usage: ScriptedUsage,
  model: string,
  serial: number,
): Reply {
  const content =
    turn.kind === 'text'
      ? [{ type: 'text', text: turn.text }]
      : turn.calls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: call.args }))
  const stop = turn.kind === 'text' ? 'end_turn' : 'tool_use'
  const usageJson = {
    input_tokens: usage.input,
    output_tokens: usage.output,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  }
  const message = { id: `msg_scripted_${serial}`, type: 'message', role: 'assistant', model }
  if (!stream)
    return { status: 200, body: { ...message, content, stop_reason: stop, stop_sequence: null, usage: usageJson } }
  const sse: SseItem[] = [
    new NamedEvent('message_start', {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usageJson, output_tokens: 1 },
      },
    }),
  ]
  content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} }
    sse.push(new NamedEvent('content_block_start', { type: 'content_block_start', index, content_block: start }))
    const delta =
      block.type === 'text'
        ? { type: 'text_delta', text: (block as { text: string }).text }
        : { type: 'input_json_delta', partial_json: JSON.stringify((block as { input: unknown }).input) }
    sse.push(new NamedEvent('content_block_delta', { type: 'content_block_delta', index, delta }))
    sse.push(new NamedEvent('content_block_stop', { type: 'content_block_stop', index }))
  })
  sse.push(
    new NamedEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
  )
  sse.push(new NamedEvent('message_stop', { type: 'message_stop' }))
  return { sse, done: false }
}
