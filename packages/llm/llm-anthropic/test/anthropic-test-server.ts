import { createServer } from 'node:http'
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request exactly as the server received it. */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The body bytes as text, unparsed. */
  readonly rawBody: string
  /** The body parsed as JSON (`undefined` when it is not JSON). */
  readonly body: any
}

/** One server-sent event. */
export interface SseEvent {
  readonly event: string
  readonly data: unknown
}

/**
 * What the server answers:
 * - `stream`: 200 with these SSE events, then end the response (`end`), keep it open until the
 *   client goes away or the test cuts it (`hang`);
 * - `status`: an error status with a JSON (or text) body and extra headers;
 * - `hang`: never send headers (for timeouts);
 * - `drip`: 200, then `next(tick)` (tick 0, 1, …) every `everyMs` for as long as the client
 *   listens; the response ends when `next` returns `undefined`.
 */
export type ServerReply =
  | { readonly kind: 'stream'; readonly events: readonly SseEvent[]; readonly ending?: 'end' | 'hang' }
  | { readonly kind: 'drip'; readonly next: (tick: number) => SseEvent | undefined; readonly everyMs: number }
  | {
      readonly kind: 'status'
      readonly status: number
      readonly headers?: Record<string, string>
      readonly body: unknown
    }
  | { readonly kind: 'hang' }

/** Chooses the reply to request number `index` (0-based, in arrival order). */
export type Responder = (request: RecordedRequest, index: number) => ServerReply | Promise<ServerReply>

/** A recording Anthropic stand-in on 127.0.0.1. */
export interface AnthropicTestServer {
  /** Base URL to give the adapter. */
  readonly url: string
  /** Every request received, in order. */
  readonly requests: RecordedRequest[]
  /** Resolves once the client closed the connection of request `index`. */
  closed(index: number): Promise<void>
  /** Cuts the socket of request `index` (a connection lost mid-stream). */
  cut(index: number): void
  close(): Promise<void>
}

/** Starts a real HTTP server on an ephemeral port that answers through `responder`. */
export async function startAnthropicServer(responder: Responder): Promise<AnthropicTestServer> {
  const requests: RecordedRequest[] = []
  const responses: ServerResponse[] = []
  const closedSignals: Array<{ promise: Promise<void>; resolve: () => void }> = []
  const closedSignal = (index: number) => {
    while (closedSignals.length <= index) {
      let resolve!: () => void
      const promise = new Promise<void>((done) => (resolve = done))
      closedSignals.push({ promise, resolve })
    }
    return closedSignals[index]!
  }
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8')
      let body: unknown
      try {
        body = JSON.parse(rawBody)
      } catch {
        body = undefined
      }
      const recorded: RecordedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        rawBody,
        body,
      }
      const index = requests.push(recorded) - 1
      responses[index] = response
      response.on('close', () => closedSignal(index).resolve())
      Promise.resolve(responder(recorded, index)).then(
        (reply) => send(response, reply),
        (error: unknown) =>
          send(response, {
            kind: 'status',
            status: 500,
            body: { type: 'error', error: { type: 'api_error', message: `test responder failed: ${String(error)}` } },
          }),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    closed: (index) => closedSignal(index).promise,
    cut: (index) => void responses[index]?.socket?.destroy(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function send(response: ServerResponse, reply: ServerReply): void {
  switch (reply.kind) {
    case 'hang':
      return
    case 'status': {
      const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
      const type = typeof reply.body === 'string' ? 'text/plain' : 'application/json'
      response.writeHead(reply.status, { 'content-type': type, 'request-id': 'req_test', ...reply.headers })
      response.end(text)
      return
    }
    case 'stream': {
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'request-id': 'req_test',
      })
      for (const event of reply.events) response.write(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`)
      if (reply.ending !== 'hang') response.end()
      return
    }
    case 'drip': {
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'request-id': 'req_test',
      })
      let tick = 0
      const timer = setInterval(() => {
        const event = reply.next(tick++)
        if (event === undefined) {
          clearInterval(timer)
          response.end()
          return
        }
        response.write(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`)
      }, reply.everyMs)
      response.on('close', () => clearInterval(timer))
    }
  }
}
