/** The proxy's own token header: checked by the proxy, never forwarded. */
export const PROXY_TOKEN_HEADER = 'x-warmfold-proxy-token'

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1): never passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'upgrade', 'trailer'])

/**
 * The headers to send upstream, from the client's `rawHeaders`: every name, case, order and value
 * kept, except hop-by-hop headers (and those the client's `connection` header names), the proxy's
 * token header, `host` (set to `upstreamHost`, where the client had it) and `content-length` (set
 * to `bodyLength`, where the client had it, or added when the body is not empty, for a body that
 * came chunked or was rewritten).
 */
export function forwardHeaders(rawHeaders: readonly string[], upstreamHost: string, bodyLength: number): string[] {
  const kept = endToEndHeaders(rawHeaders)
  const headers: string[] = []
  let host = false
  let length = false
  for (let index = 0; index + 1 < kept.length; index += 2) {
    const name = kept[index] as string
    const lower = name.toLowerCase()
    if (lower === PROXY_TOKEN_HEADER) continue
    if (lower === 'host') {
      if (!host) headers.push(name, upstreamHost)
      host = true
    } else if (lower === 'content-length') {
      if (!length) headers.push(name, String(bodyLength))
      length = true
    } else headers.push(name, kept[index + 1] as string)
  }
  if (!host) headers.unshift('host', upstreamHost)
  if (!length && bodyLength > 0) headers.push('content-length', String(bodyLength))
  return headers
}

/**
 * What a proxy passes on of `rawHeaders`, either way: every header as sent, but hop-by-hop ones
 * (`proxy-*` and those the `connection` header names included).
 */
export function endToEndHeaders(rawHeaders: readonly string[]): string[] {
  const named = connectionNamed(rawHeaders)
  const headers: string[] = []
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as string
    const lower = name.toLowerCase()
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || named.has(lower)) continue
    headers.push(name, rawHeaders[index + 1] as string)
  }
  return headers
}

/** The value of the first header named `name` (any case) in `rawHeaders`. */
export function rawHeader(rawHeaders: readonly string[], name: string): string | undefined {
  for (let index = 0; index + 1 < rawHeaders.length; index += 2)
    if ((rawHeaders[index] as string).toLowerCase() === name) return rawHeaders[index + 1]
  return undefined
}

/** Header names a `connection` header lists (they are hop-by-hop too). */
function connectionNamed(rawHeaders: readonly string[]): Set<string> {
  const named = new Set<string>()
  for (let index = 0; index + 1 < rawHeaders.length; index += 2)
    if ((rawHeaders[index] as string).toLowerCase() === 'connection')
      for (const token of (rawHeaders[index + 1] as string).split(','))
        if (token.trim() !== '') named.add(token.trim().toLowerCase())
  return named
}
