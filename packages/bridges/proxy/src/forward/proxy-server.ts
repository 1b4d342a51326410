import type { IncomingMessage, ServerResponse } from 'node:http'
import { Agent as HttpAgent, createServer } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { ExchangeObserver, InboundRequest, WarmPlanner } from '../proxy-exchange.ts'
import type { ForwardTarget } from './forward-request.ts'
import { errorBody, sendWhole } from './forward-request.ts'
import { readBody, tooLargeBody } from './read-body.ts'
import { routeOf } from './route-of.ts'
import { carriesToken, splitToken, unauthorizedBody } from './proxy-token.ts'
import type { ExchangeParts } from './run-exchange.ts'
import { runExchange } from './run-exchange.ts'

/** Where a started proxy listens. */
export interface ProxyAddress {
  readonly host: string
  readonly port: number
  /** `http://<host>:<port>` (an IPv6 host in brackets). */
  readonly url: string
}

/** What {@link startProxyServer} runs with. The observer and planner are read per request. */
export interface ProxyServerOptions extends Pick<
  ExchangeParts,
  'mode' | 'onPartError' | 'onFailOpen' | 'hold' | 'onHoldReleased'
> {
  readonly upstream: URL
  readonly host: string
  /** 0: any free port. */
  readonly port: number
  /** Required of every request when set (header or `/_t/<token>` path prefix). */
  readonly token?: string
  readonly maxBodyBytes: number
  readonly parts: () => { readonly observer: ExchangeObserver; readonly planner: WarmPlanner }
}

/** A listening proxy. */
export interface ProxyServer {
  readonly address: ProxyAddress
  /** Stops accepting, ends open connections, frees the upstream connection pool. */
  close(): Promise<void>
}

/**
 * Starts the proxy's HTTP server: checks the token, serves `/_warmfold/` (the observer's page)
 * and `/_warmfold/state.json`, reads each body (at most `maxBodyBytes`, else 413) and runs its
 * exchange with the upstream. Rejects when it cannot listen (the port taken, the host unknown).
 */
export async function startProxyServer(options: ProxyServerOptions): Promise<ProxyServer> {
  const upstream = options.upstream
  const agent =
    upstream.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true })
  const target: ForwardTarget = { url: upstream, agent }
  let nextId = 0
  const handle = async (request: IncomingMessage, client: ServerResponse): Promise<void> => {
    const method = request.method ?? 'GET'
    const { path, pathToken } = splitToken(request.url ?? '/', options.token !== undefined)
    if (options.token !== undefined && !carriesToken(options.token, request.rawHeaders, pathToken)) {
      request.resume()
      const sent = pathToken !== undefined || request.headers['x-warmfold-proxy-token'] !== undefined
      return sendWhole(client, 401, unauthorizedBody(sent))
    }
    const bare = path.split('?')[0] as string
    if (bare === '/_warmfold' || bare === '/_warmfold/' || bare === '/_warmfold/state.json') {
      request.resume()
      const { observer } = options.parts()
      if (bare.endsWith('.json')) return sendWhole(client, 200, JSON.stringify(observer.snapshot()))
      return sendWhole(client, 200, observer.renderPage(), 'text/html; charset=utf-8')
    }
    const route = routeOf(method, path)
    const reading = await readBody(request, options.maxBodyBytes)
    if (reading.outcome === 'aborted') return void client.destroy()
    if (reading.outcome === 'too-large') {
      client.shouldKeepAlive = false
      return sendWhole(client, 413, tooLargeBody(options.maxBodyBytes, reading.received, reading.declared))
    }
    const inbound = inboundRequest(++nextId, reading.receivedAt, method, path, route, request.rawHeaders, reading.body)
    await runExchange(inbound, client, { ...options, target, ...options.parts() })
  }
  const server = createServer((request, client) => {
    handle(request, client).catch((error: unknown) => {
      // A bug on the proxy's side: answer 500 if nothing was sent yet, never crash the process.
      if (!client.headersSent && !client.destroyed)
        sendWhole(client, 500, errorBody('proxy_error', `warmfold proxy: ${String(error)}`))
      else client.destroy()
    })
  })
  server.on('clientError', (_error, socket) => socket.destroy())
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    address: { host: options.host, port, url: `http://${shown}:${port}` },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await closed
      agent.destroy()
    },
  }
}

/**
 * The request as the seam describes it. `headers` and `stream` are computed on first read, so the
 * forward itself never joins headers nor parses the body (the observer reads them later).
 */
function inboundRequest(
  id: number,
  receivedAt: number,
  method: string,
  url: string,
  route: InboundRequest['route'],
  rawHeaders: readonly string[],
  body: Buffer,
): InboundRequest {
  let headers: Record<string, string> | undefined
  let stream: boolean | undefined
  return {
    id,
    receivedAt,
    method,
    url,
    route,
    rawHeaders,
    body,
    get headers() {
      headers ??= joinHeaders(rawHeaders)
      return headers
    },
    get stream() {
      stream ??= route.streamByPath || bodyAsksStream(body)
      return stream
    },
  }
}

function joinHeaders(rawHeaders: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {}
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] as string).toLowerCase()
    const value = rawHeaders[index + 1] as string
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  return headers
}

function bodyAsksStream(body: Buffer): boolean {
  try {
    const json = JSON.parse(body.toString('utf8')) as unknown
    return typeof json === 'object' && json !== null && (json as { stream?: unknown }).stream === true
  } catch {
    return false
  }
}
