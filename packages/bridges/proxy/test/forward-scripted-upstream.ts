import type { IncomingMessage, ServerResponse } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request exactly as the scripted upstream got it. */
export interface UpstreamRecord {
  readonly method: string
  readonly url: string
  readonly rawHeaders: readonly string[]
  readonly body: Buffer
}

/** One scripted answer: status, raw headers, and the body in parts (each written on its own). */
export interface ScriptedAnswer {
  readonly status: number
  readonly headers: readonly string[]
  readonly parts: ReadonlyArray<Buffer | string>
  /** Awaited before writing part `index` (index ≥ 1): holds the stream until the test lets it go on. */
  readonly before?: (index: number) => Promise<void>
}

export type Script = (request: UpstreamRecord, index: number) => ScriptedAnswer | Promise<ScriptedAnswer>

/** A node:http server on 127.0.0.1 that records raw requests and answers with scripted bytes. */
export class ScriptedUpstream {
  readonly requests: UpstreamRecord[] = []
  /** The exact bytes of every answer body it wrote, per request. */
  readonly sent: Buffer[][] = []
  /** Per request: resolves when its answer's connection closed (ended, or the client went away). */
  readonly closed: Promise<void>[] = []

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    readonly url: string,
  ) {}

  static async start(script: Script): Promise<ScriptedUpstream> {
    let self: ScriptedUpstream | undefined
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const upstream = self as ScriptedUpstream
        const record = {
          method: request.method ?? '',
          url: request.url ?? '',
          rawHeaders: [...request.rawHeaders],
          body: Buffer.concat(chunks),
        }
        const index = upstream.requests.push(record) - 1
        const written: Buffer[] = []
        upstream.sent[index] = written
        upstream.closed[index] = new Promise((resolve) => response.on('close', resolve))
        void (async () => {
          const answer = await script(record, index)
          response.writeHead(answer.status, [...answer.headers])
          for (const [position, part] of answer.parts.entries()) {
            if (position > 0 && answer.before) await answer.before(position)
            if (response.destroyed) return
            const bytes = Buffer.isBuffer(part) ? part : Buffer.from(part)
            written.push(bytes)
            response.write(bytes)
          }
          response.end()
        })()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    self = new ScriptedUpstream(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    return self
  }

  /** The exact bytes of answer `index`. */
  answerBytes(index: number): Buffer {
    return Buffer.concat(this.sent[index] ?? [])
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** Raw headers of a JSON answer. */
export function jsonHeaders(body: string): string[] {
  return [
    'Content-Type',
    'application/json',
    'Content-Length',
    String(Buffer.byteLength(body)),
    'X-Request-Id',
    'req_1',
  ]
}

/** Raw headers of an SSE answer (chunked). */
export const SSE_HEADERS: readonly string[] = [
  'Content-Type',
  'text/event-stream; charset=utf-8',
  'Cache-Control',
  'no-cache',
]

/** An SSE event's bytes: `event:` line when named, then one `data:` line. */
export function sse(data: unknown, event?: string): string {
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`
}
