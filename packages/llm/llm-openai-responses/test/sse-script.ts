import type { Reply, SseItem } from '@warmfold/test-utils'
import { NamedEvent } from '@warmfold/test-utils'

/** One output item of a canned reply. `arguments` is the tool input exactly as the model streams it. */
export type ScriptItem =
  | {
      readonly type: 'reasoning'
      readonly id: string
      readonly summary: readonly string[]
      readonly encrypted: string | null
    }
  | {
      readonly type: 'message'
      readonly id?: string
      readonly text: string
      readonly phase?: 'commentary' | 'final_answer'
    }
  | {
      readonly type: 'function_call'
      readonly id?: string
      readonly callId: string
      readonly name: string
      readonly arguments: string
    }
  | { readonly type: 'web_search_call'; readonly id: string }

/** A canned reply: its items, final status and usage. */
export interface ScriptReply {
  readonly items: readonly ScriptItem[]
  /** `completed` (default) or `incomplete` with this reason. */
  readonly incomplete?: 'max_output_tokens' | 'content_filter'
  /** The `usage` of the final response; default 10 input (0 cached), 42 output. */
  readonly usage?: Record<string, unknown> | null
}

/** The default usage of a canned reply. */
export const USAGE = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 42,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 52,
}

function halves(text: string): [string, string] {
  const middle = Math.ceil(text.length / 2)
  return [text.slice(0, middle), text.slice(middle)]
}

/** The item as `response.output_item.done` carries it. */
export function doneItem(item: ScriptItem): Record<string, unknown> {
  switch (item.type) {
    case 'reasoning':
      return {
        id: item.id,
        type: 'reasoning',
        summary: item.summary.map((text) => ({ type: 'summary_text', text })),
        encrypted_content: item.encrypted,
      }
    case 'message':
      return {
        id: item.id ?? 'msg_1',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: item.text, annotations: [] }],
        ...(item.phase ? { phase: item.phase } : {}),
      }
    case 'function_call':
      return {
        id: item.id ?? `fc_${item.callId}`,
        type: 'function_call',
        status: 'completed',
        call_id: item.callId,
        name: item.name,
        arguments: item.arguments,
      }
    case 'web_search_call':
      return { id: item.id, type: 'web_search_call', status: 'completed' }
  }
}

/** The events of one item at `output_index` `index`, shaped like the streaming reference. */
export function itemEvents(item: ScriptItem, index: number, next: () => number): SseItem[] {
  const event = (type: string, data: Record<string, unknown>) =>
    new NamedEvent(type, { type, sequence_number: next(), ...data })
  const done = doneItem(item)
  const itemId = done.id
  const added =
    item.type === 'reasoning'
      ? { id: item.id, type: 'reasoning', summary: [] }
      : item.type === 'message'
        ? { ...done, status: 'in_progress', content: [] }
        : { ...done, status: 'in_progress', arguments: '' }
  const events: SseItem[] = [event('response.output_item.added', { output_index: index, item: added })]
  if (item.type === 'reasoning') {
    item.summary.forEach((text, summary_index) => {
      const [first, second] = halves(text)
      events.push(
        event('response.reasoning_summary_part.added', {
          item_id: itemId,
          output_index: index,
          summary_index,
          part: { type: 'summary_text', text: '' },
        }),
        event('response.reasoning_summary_text.delta', {
          item_id: itemId,
          output_index: index,
          summary_index,
          delta: first,
        }),
        event('response.reasoning_summary_text.delta', {
          item_id: itemId,
          output_index: index,
          summary_index,
          delta: second,
        }),
        event('response.reasoning_summary_text.done', { item_id: itemId, output_index: index, summary_index, text }),
        event('response.reasoning_summary_part.done', {
          item_id: itemId,
          output_index: index,
          summary_index,
          part: { type: 'summary_text', text },
        }),
      )
    })
  } else if (item.type === 'message') {
    const [first, second] = halves(item.text)
    events.push(
      event('response.content_part.added', {
        item_id: itemId,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
      event('response.output_text.delta', {
        item_id: itemId,
        output_index: index,
        content_index: 0,
        delta: first,
        logprobs: [],
      }),
      event('response.output_text.delta', {
        item_id: itemId,
        output_index: index,
        content_index: 0,
        delta: second,
        logprobs: [],
      }),
      event('response.output_text.done', {
        item_id: itemId,
        output_index: index,
        content_index: 0,
        text: item.text,
        logprobs: [],
      }),
      event('response.content_part.done', {
        item_id: itemId,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: item.text, annotations: [] },
      }),
    )
  } else if (item.type === 'function_call') {
    const [first, second] = halves(item.arguments)
    events.push(
      event('response.function_call_arguments.delta', { item_id: itemId, output_index: index, delta: first }),
      event('response.function_call_arguments.delta', { item_id: itemId, output_index: index, delta: second }),
      event('response.function_call_arguments.done', {
        item_id: itemId,
        output_index: index,
        arguments: item.arguments,
      }),
    )
  }
  events.push(event('response.output_item.done', { output_index: index, item: done }))
  return events
}

/** A `response` object of a lifecycle event. */
export function responseObject(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'resp_test',
    object: 'response',
    created_at: 1,
    status,
    model: 'gpt-test',
    output: [],
    error: null,
    incomplete_details: null,
    usage: null,
    ...extra,
  }
}

/** The opening events: `response.created`, `response.in_progress`. */
export function openingEvents(next: () => number): SseItem[] {
  return [
    new NamedEvent('response.created', {
      type: 'response.created',
      sequence_number: next(),
      response: responseObject('in_progress'),
    }),
    new NamedEvent('response.in_progress', {
      type: 'response.in_progress',
      sequence_number: next(),
      response: responseObject('in_progress'),
    }),
  ]
}

/** Every event of a complete reply. */
export function replyEvents(reply: ScriptReply): SseItem[] {
  let sequence = 0
  const next = () => sequence++
  const events = openingEvents(next)
  reply.items.forEach((item, index) => events.push(...itemEvents(item, index, next)))
  const usage = reply.usage === undefined ? USAGE : reply.usage
  const type = reply.incomplete ? 'response.incomplete' : 'response.completed'
  const response = responseObject(reply.incomplete ? 'incomplete' : 'completed', {
    output: reply.items.map(doneItem),
    usage,
    ...(reply.incomplete ? { incomplete_details: { reason: reply.incomplete } } : {}),
  })
  events.push(new NamedEvent(type, { type, sequence_number: next(), response }))
  return events
}

/** A 200 reply streaming `reply` (no `[DONE]`: the Responses API does not send one). */
export function streamReply(reply: ScriptReply): Reply {
  return { sse: replyEvents(reply), done: false }
}

/** An OpenAI error reply `{ error: { message, type, param, code } }` with `status`. */
export function errorReply(
  status: number,
  type: string,
  code: string | null,
  message: string,
  headers?: Record<string, string>,
): Reply {
  return { status, body: { error: { message, type, param: null, code } }, ...(headers ? { headers } : {}) }
}

/** An in-stream `error` event. */
export function errorEvent(code: string | null, message: string): NamedEvent {
  return new NamedEvent('error', { type: 'error', code, message, param: null, sequence_number: 99 })
}

/** A `response.failed` event. */
export function failedEvent(code: string, message: string): NamedEvent {
  return new NamedEvent('response.failed', {
    type: 'response.failed',
    sequence_number: 99,
    response: responseObject('failed', { error: { code, message } }),
  })
}
