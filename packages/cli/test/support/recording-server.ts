import { once } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request as a client SDK sent it, in the `warmfold doctor` log-line shape. */
export interface RecordedRequest {
  readonly url: string
  readonly t: number
  readonly headers: Record<string, string>
  readonly body: unknown
}

/**
 * A 127.0.0.1 HTTP server that records every request body an SDK sends and answers with the
 * smallest reply each API's SDK accepts (a one-word text answer). Chat Completions requests
 * with `stream: true` get a server-sent event stream. `t` counts requests (one per
 * millisecond), so recordings are deterministic.
 */
export class RecordingServer {
  readonly requests: RecordedRequest[] = []
  private readonly server = createServer((request, response) => void this.handle(request, response))

  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    return this
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    this.server.close()
    await once(this.server, 'close')
  }

  /** The recorded requests as a JSONL log, one `{ url, t, headers, body }` per line (the API key header left out). */
  log(): string {
    return this.requests.map((request) => `${JSON.stringify(request)}\n`).join('')
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers))
      if (typeof value === 'string' && !/key|authorization/i.test(name)) headers[name] = value
    const url = request.url ?? ''
    this.requests.push({ url, t: this.requests.length + 1, headers, body })
    const path = new URL(url, this.url).pathname
    if (path.endsWith('/chat/completions') && body.stream === true) return chatStream(response)
    response.setHeader('content-type', 'application/json')
    response.end(JSON.stringify(replyFor(path)))
  }
}

function chatStream(response: ServerResponse): void {
  response.setHeader('content-type', 'text/event-stream')
  response.end(`${chatChunk({ role: 'assistant', content: 'ok' }, null)}${chatChunk({}, 'stop')}data: [DONE]\n\n`)
}

function chatChunk(delta: object, finish: string | null): string {
  return `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
}

function replyFor(path: string): object {
  if (path.endsWith('/chat/completions'))
    return {
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    }
  if (path.endsWith('/responses'))
    return {
      id: 'r',
      object: 'response',
      created_at: 0,
      model: 'm',
      status: 'completed',
      output: [
        {
          type: 'message',
          id: 'msg',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'ok', annotations: [] }],
        },
      ],
    }
  if (path.endsWith('/messages'))
    return {
      id: 'a',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    }
  return { candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }
}
