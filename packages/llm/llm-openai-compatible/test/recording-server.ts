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

/** What the server answers. */
export type Reply =
  /** An SSE stream of `events` (objects are JSON-encoded), then `data: [DONE]` unless `done: false`; `hold` keeps the connection open afterwards. */
  | { readonly sse: ReadonlyArray<object | string>; readonly done?: boolean; readonly hold?: boolean; readonly headers?: Record<string, string> }
  /** A plain response (errors). */
  | { readonly status: number; readonly body: object | string; readonly headers?: Record<string, string> }
  /** Never answers (the connection stays open until the client gives up or the server closes). */
  | { readonly hang: true }
  /** Destroys the socket without answering. */
  | { readonly destroy: true }
  /**
   * A 200 SSE stream that sends `drip(tick)` (tick 0, 1, …) every `everyMs` for as long as the
   * client listens; when `drip` returns `undefined`, `data: [DONE]` follows and the stream ends.
   */
  | { readonly drip: (tick: number) => object | string | undefined; readonly everyMs: number }

/** Chooses the reply to request number `index` (0-based). */
export type Responder = (request: RecordedRequest, index: number) => Reply | Promise<Reply>

/**
 * A real HTTP server on 127.0.0.1 (port 0) that answers chat completions requests with canned
 * replies and records every request's raw body and headers. No `fetch` is mocked anywhere: the
 * adapter's SDK talks to this server over TCP.
 */
export class RecordingServer {
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[] = []
  private readonly open = new Set<ServerResponse>()
  private readonly closings: Array<Promise<void>> = []

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    /** `http://127.0.0.1:<port>/v1`. */
    readonly baseURL: string,
  ) {}

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
        const recorded: RecordedRequest = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, json, receivedAt: Date.now() }
        const self = recording as RecordingServer
        const index = self.requests.push(recorded) - 1
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

function send(response: ServerResponse, reply: Reply): void {
  if ('hang' in reply) return
  if ('destroy' in reply) {
    response.socket?.destroy()
    return
  }
  if ('drip' in reply) {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    let tick = 0
    const timer = setInterval(() => {
      const event = reply.drip(tick++)
      if (event === undefined) {
        clearInterval(timer)
        response.end('data: [DONE]\n\n')
        return
      }
      response.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`)
    }, reply.everyMs)
    response.on('close', () => clearInterval(timer))
    return
  }
  if ('status' in reply) {
    const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
    response.writeHead(reply.status, { 'content-type': typeof reply.body === 'string' ? 'text/plain' : 'application/json', ...reply.headers })
    response.end(body)
    return
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...reply.headers })
  for (const event of reply.sse) response.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`)
  if (reply.done !== false) response.write('data: [DONE]\n\n')
  if (!reply.hold) response.end()
}
