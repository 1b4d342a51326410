/**
 * A 127.0.0.1 server that answers one streamed "ok" in each provider's wire format, reporting
 * `CACHED` cached tokens of `PROMPT`, so the consumer host can call every installed adapter over
 * real HTTP with the SDK versions npm resolved for it. It records each request's path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export const PROMPT = 2048
export const CACHED = 1920

type Event = readonly [name: string | undefined, data: object]

function chatCompletions(): Event[] {
  return [
    [
      undefined,
      {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }],
      },
    ],
    [
      undefined,
      {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
      },
    ],
    [
      undefined,
      {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [],
        usage: {
          prompt_tokens: PROMPT,
          completion_tokens: 1,
          total_tokens: PROMPT + 1,
          prompt_tokens_details: { cached_tokens: CACHED },
        },
      },
    ],
  ]
}

function anthropic(): Event[] {
  const usage = {
    input_tokens: PROMPT - CACHED,
    cache_read_input_tokens: CACHED,
    cache_creation_input_tokens: 0,
    output_tokens: 1,
  }
  return [
    [
      'message_start',
      {
        type: 'message_start',
        message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage },
      },
    ],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } },
    ],
    ['message_stop', { type: 'message_stop' }],
  ]
}

function gemini(): Event[] {
  const usageMetadata = {
    promptTokenCount: PROMPT,
    cachedContentTokenCount: CACHED,
    candidatesTokenCount: 1,
    totalTokenCount: PROMPT + 1,
  }
  return [
    [
      undefined,
      {
        candidates: [{ content: { parts: [{ text: 'ok' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata,
      },
    ],
  ]
}

function responseObject(status: string, extra: object): object {
  return { id: 'resp_1', object: 'response', created_at: 1, status, model: 'm', output: [], ...extra }
}

function responses(): Event[] {
  const message = {
    type: 'message',
    id: 'msg_1',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: 'ok', annotations: [] }],
  }
  const usage = {
    input_tokens: PROMPT,
    input_tokens_details: { cached_tokens: CACHED },
    output_tokens: 1,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: PROMPT + 1,
  }
  return [
    ['response.created', { type: 'response.created', sequence_number: 0, response: responseObject('in_progress', {}) }],
    [
      'response.output_item.added',
      {
        type: 'response.output_item.added',
        sequence_number: 1,
        output_index: 0,
        item: { ...message, status: 'in_progress', content: [] },
      },
    ],
    [
      'response.content_part.added',
      {
        type: 'response.content_part.added',
        sequence_number: 2,
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      },
    ],
    [
      'response.output_text.delta',
      {
        type: 'response.output_text.delta',
        sequence_number: 3,
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        delta: 'ok',
      },
    ],
    [
      'response.output_text.done',
      {
        type: 'response.output_text.done',
        sequence_number: 4,
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        text: 'ok',
      },
    ],
    [
      'response.content_part.done',
      {
        type: 'response.content_part.done',
        sequence_number: 5,
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        part: message.content[0],
      },
    ],
    [
      'response.output_item.done',
      { type: 'response.output_item.done', sequence_number: 6, output_index: 0, item: message },
    ],
    [
      'response.completed',
      {
        type: 'response.completed',
        sequence_number: 7,
        response: responseObject('completed', { output: [message], usage }),
      },
    ],
  ]
}

/** The reply of a request path, or undefined for a path no adapter should call. */
function eventsFor(path: string): { events: Event[]; done: boolean } | undefined {
  if (path.endsWith('/chat/completions')) return { events: chatCompletions(), done: true }
  if (path.endsWith('/v1/messages')) return { events: anthropic(), done: false }
  if (path.endsWith('/responses')) return { events: responses(), done: false }
  if (path.includes(':streamGenerateContent')) return { events: gemini(), done: false }
  return undefined
}

export interface WireServer {
  readonly origin: string
  readonly paths: string[]
  close(): Promise<void>
}

export async function startWireServer(): Promise<WireServer> {
  const paths: string[] = []
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume()
    request.on('end', () => {
      const path = request.url ?? ''
      paths.push(path)
      const reply = eventsFor(path)
      if (!reply) {
        response.writeHead(404, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ error: { message: `no such path ${path}` } }))
        return
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const [name, data] of reply.events)
        response.write(`${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`)
      response.end(reply.done ? 'data: [DONE]\n\n' : '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
