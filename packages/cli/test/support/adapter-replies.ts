import type { Reply } from '@warmfold/test-utils'
import { NamedEvent } from '@warmfold/test-utils'

function chunk(delta: object, finish: string | null): object {
  return {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
  }
}

/** A streamed one-word answer ("ok") in the wire format of the request's path, for any adapter. */
export function okReplyFor(path: string): Reply {
  if (path.endsWith('/chat/completions')) {
    return {
      sse: [
        chunk({ role: 'assistant', content: 'ok' }, null),
        chunk({}, 'stop'),
        {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'm',
          choices: [],
          usage: { prompt_tokens: 10, completion_tokens: 1 },
        },
      ],
    }
  }
  if (path.endsWith('/v1/messages')) {
    return {
      sse: [
        new NamedEvent('message_start', {
          type: 'message_start',
          message: {
            id: 'msg',
            type: 'message',
            role: 'assistant',
            model: 'm',
            content: [],
            stop_reason: null,
            usage: { input_tokens: 10, output_tokens: 1 },
          },
        }),
        new NamedEvent('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        }),
        new NamedEvent('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'ok' },
        }),
        new NamedEvent('content_block_stop', { type: 'content_block_stop', index: 0 }),
        new NamedEvent('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 1 },
        }),
        new NamedEvent('message_stop', { type: 'message_stop' }),
      ],
      done: false,
    }
  }
  if (path.endsWith('/responses'))
    return {
      sse: responsesEvents({
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 1,
        output_tokens_details: { reasoning_tokens: 0 },
      }),
      done: false,
    }
  if (path.includes(':streamGenerateContent')) {
    return {
      sse: [
        {
          candidates: [{ content: { parts: [{ text: 'ok' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1, totalTokenCount: 11 },
        },
      ],
      done: false,
    }
  }
  return { status: 404, body: { error: { message: `no reply for ${path}` } } }
}

/** The Responses API's named events of a one-message answer "ok" with `usage`. */
export function responsesEvents(usage: object): NamedEvent[] {
  const message = {
    id: 'msg_1',
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: 'ok', annotations: [] }],
  }
  return [
    new NamedEvent('response.output_item.added', {
      type: 'response.output_item.added',
      output_index: 0,
      item: { ...message, status: 'in_progress', content: [] },
    }),
    new NamedEvent('response.output_text.delta', {
      type: 'response.output_text.delta',
      output_index: 0,
      content_index: 0,
      item_id: 'msg_1',
      delta: 'ok',
    }),
    new NamedEvent('response.output_item.done', { type: 'response.output_item.done', output_index: 0, item: message }),
    new NamedEvent('response.completed', {
      type: 'response.completed',
      response: { id: 'resp_1', object: 'response', status: 'completed', output: [message], usage },
    }),
  ]
}
