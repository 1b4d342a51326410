import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A forward proxy on 127.0.0.1 that refuses every request and remembers where it was going. */
export interface OutboundGuard {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  /** Hosts (`host:port`) the agent tried to reach through the proxy, in order. */
  readonly attempts: readonly string[]
  /** The proxy variables that send an agent's traffic (all but 127.0.0.1 and localhost) here. */
  readonly env: Readonly<Record<string, string>>
  close(): Promise<void>
}

/**
 * Starts the guard. Agents that honour `HTTPS_PROXY` / `HTTP_PROXY` (and `NO_PROXY` for the scripted
 * upstream on 127.0.0.1) get a 403 for every other host instead of reaching the network, and the
 * run reports which hosts they tried (telemetry, update checks, feature flags).
 */
export async function startOutboundGuard(): Promise<OutboundGuard> {
  const attempts: string[] = []
  const server = createServer((request, response) => {
    attempts.push(hostOf(request.url ?? '', request.headers.host))
    response.writeHead(403, { 'content-type': 'text/plain' })
    response.end('warmfold agent run: no network but 127.0.0.1\n')
  })
  server.on('connect', (request, socket) => {
    attempts.push(request.url ?? '')
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const noProxy = '127.0.0.1,localhost,::1'
  return {
    url,
    attempts,
    env: {
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      NO_PROXY: noProxy,
      no_proxy: noProxy,
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function hostOf(url: string, host: string | undefined): string {
  try {
    return new URL(url).host
  } catch {
    return host ?? url
  }
}
