import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request as the server received it: the raw body bytes (as text) and all headers. */
export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  /** The body exactly as sent. */
  readonly body: string
  /** `body` parsed, or `undefined` when it is not JSON. */
  readonly json: any
  /** `Date.now()` when the request arrived. */
  readonly receivedAt: number
}

/**
 * A server-sent event with an `event:` name line (Anthropic, OpenAI Responses). A plain object or
 * string in an SSE reply is sent as a bare `data:` line (chat completions, Gemini).
 */
export class NamedEvent {
  constructor(
    readonly event: string,
    readonly data: object | string,
  ) {}
}

/** One element of an SSE reply. */
export type SseItem = object | string | NamedEvent

/** What the server answers. */
export type Reply =
  /**
   * An SSE stream of `sse` (objects are JSON-encoded, {@link NamedEvent}s get their `event:` line),
   * then `data: [DONE]` unless `done: false` (only chat completions sends it); `hold` keeps the
   * connection open afterwards.
   */
  | {
      readonly sse: readonly SseItem[]
      readonly done?: boolean
      readonly hold?: boolean
      readonly headers?: Record<string, string>
    }
  /** A plain response (errors). */
  | { readonly status: number; readonly body: object | string; readonly headers?: Record<string, string> }
  /** Never answers (the connection stays open until the client gives up or the server closes). */
  | { readonly hang: true }
  /** Destroys the socket without answering. */
  | { readonly destroy: true }
  /**
   * A 200 SSE stream that sends `drip(tick)` (tick 0, 1, …) every `everyMs` for as long as the
   * client listens; when `drip` returns `undefined`, `data: [DONE]` follows (unless `done: false`)
   * and the stream ends.
   */
  | { readonly drip: (tick: number) => SseItem | undefined; readonly everyMs: number; readonly done?: boolean }

/** Chooses the reply to request number `index` (0-based). */
export type Responder = (request: RecordedRequest, index: number) => Reply | Promise<Reply>

/**
 * A real HTTP server on 127.0.0.1 (port 0) that answers any request with canned replies (SSE
 * streams, error statuses, stalls, cut connections) and records every request's raw body and
 * headers. No `fetch` is mocked anywhere: an adapter's SDK talks to this server over TCP.
 */
export class RecordingServer {
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[] = []
  private readonly open = new Set<ServerResponse>()
  private readonly responses: ServerResponse[] = []
  private readonly closings: Array<Promise<void>> = []

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    /** `http://127.0.0.1:<port>/v1`. */
    readonly baseURL: string,
  ) {}

  /** `http://127.0.0.1:<port>`, for SDKs that append their own version path. */
  get origin(): string {
    return this.baseURL.slice(0, -'/v1'.length)
  }

  /** Starts a server answering with `responder`. */
  static async start(responder: Responder): Promise<RecordingServer> {
    let recording: RecordingServer | undefined
    const server = createServer((request, response) => {
      const parts: Buffer[] = []
      request.on('data', (part: Buffer) => parts.push(part))
      request.on('end', () => {
        const body = Buffer.concat(parts).toString('utf8')
        let json: unknown
        try {
          json = JSON.parse(body)
        } catch {
          json = undefined
        }
        const recorded: RecordedRequest = {
          method: request.method ?? '',
          url: request.url ?? '',
          headers: request.headers,
          body,
          json,
          receivedAt: Date.now(),
        }
        const self = recording as RecordingServer
        const index = self.requests.push(recorded) - 1
        self.responses[index] = response
        self.open.add(response)
        self.closings[index] = new Promise((resolve) => response.on('close', resolve))
        response.on('close', () => self.open.delete(response))
        Promise.resolve(responder(recorded, index))
          .then((reply) => send(response, reply))
          .catch((error: unknown) => {
            response.writeHead(500, { 'content-type': 'application/json' })
            response.end(JSON.stringify({ error: { message: `test responder failed: ${String(error)}` } }))
          })
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    recording = new RecordingServer(server, `http://127.0.0.1:${port}/v1`)
    return recording
  }

  /** Requests whose parsed body satisfies `predicate`. */
  where(predicate: (request: RecordedRequest) => boolean): RecordedRequest[] {
    return this.requests.filter(predicate)
  }

  /** Resolves once the response to request `index` is closed (by either side). */
  closed(index: number): Promise<void> {
    const closing = this.closings[index]
    if (!closing) throw new Error(`no request ${index} has arrived`)
    return closing
  }

  /**
   * Destroys the socket of request `index` while its response is under way (a `hold` stream), as a
   * connection reset or a server that dies mid-response does: the client sees the body end
   * without its final chunk. Other requests are untouched.
   */
  cut(index: number): void {
    const response = this.responses[index]
    if (!response) throw new Error(`no request ${index} has arrived`)
    response.socket?.destroy()
  }

  /** Responses still open (a held stream the client has not closed yet). */
  get openResponses(): number {
    return this.open.size
  }

  /** Closes held connections and stops the server. */
  async close(): Promise<void> {
    for (const response of this.open) response.destroy()
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' }

function send(response: ServerResponse, reply: Reply): void {
  if ('hang' in reply) return
  if ('destroy' in reply) {
    response.socket?.destroy()
    return
  }
  if ('drip' in reply) {
    response.writeHead(200, SSE_HEADERS)
    let tick = 0
    const timer = setInterval(() => {
      const event = reply.drip(tick++)
      if (event === undefined) {
        clearInterval(timer)
        response.end(reply.done === false ? '' : 'data: [DONE]\n\n')
        return
      }
      response.write(sseText(event))
    }, reply.everyMs)
    response.on('close', () => clearInterval(timer))
    return
  }
  if ('status' in reply) {
    const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
    response.writeHead(reply.status, {
      'content-type': typeof reply.body === 'string' ? 'text/plain' : 'application/json',
      ...reply.headers,
    })
    response.end(body)
    return
  }
  response.writeHead(200, { ...SSE_HEADERS, ...reply.headers })
  for (const event of reply.sse) response.write(sseText(event))
  if (reply.done !== false) response.write('data: [DONE]\n\n')
  if (!reply.hold) response.end()
}

/** One event on the wire: an optional `event:` line, then its `data:` line. */
function sseText(item: SseItem): string {
  if (item instanceof NamedEvent)
    return `event: ${item.event}\ndata: ${typeof item.data === 'string' ? item.data : JSON.stringify(item.data)}\n\n`
  return `data: ${typeof item === 'string' ? item : JSON.stringify(item)}\n\n`
}
