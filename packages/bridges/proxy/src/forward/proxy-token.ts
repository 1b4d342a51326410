import { createHash, timingSafeEqual } from 'node:crypto'
import { PROXY_TOKEN_HEADER, rawHeader } from './forward-headers.ts'
import { errorBody } from './forward-request.ts'

/** A request's path with the proxy token taken out of it, and the token it carried (if any). */
export interface TokenSplit {
  /** The path and query to act on and forward (`/_t/<token>` removed). */
  readonly path: string
  readonly pathToken: string | undefined
}

/**
 * Takes a `/_t/<token>/…` prefix off `url` (agents that can set a base URL but no header put the
 * token there); only when the proxy has a token, so without one such paths are forwarded as they are.
 */
export function splitToken(url: string, hasToken: boolean): TokenSplit {
  const match = hasToken ? /^\/_t\/([^/?]*)([\s\S]*)$/.exec(url) : null
  if (!match) return { path: url, pathToken: undefined }
  const [, raw = '', rest = ''] = match
  let token = raw
  try {
    token = decodeURIComponent(raw)
  } catch {
    // A malformed escape is compared as it came.
  }
  return { path: rest.startsWith('/') ? rest : `/${rest}`, pathToken: token }
}

/**
 * Whether the request carries `token` (header `x-warmfold-proxy-token`, or the path prefix),
 * compared in constant time (digests of equal length).
 */
export function carriesToken(token: string, rawHeaders: readonly string[], pathToken: string | undefined): boolean {
  const expected = digest(token)
  const header = rawHeader(rawHeaders, PROXY_TOKEN_HEADER)
  const headerOk = header !== undefined && timingSafeEqual(digest(header), expected)
  const pathOk = pathToken !== undefined && timingSafeEqual(digest(pathToken), expected)
  return headerOk || pathOk
}

/** The 401 answer's JSON body: says what to send, never the token. */
export function unauthorizedBody(sent: boolean): string {
  return errorBody(
    'unauthorized',
    `warmfold proxy: ${sent ? 'the proxy token sent is wrong' : 'this proxy needs its token'}: send the header ` +
      `${PROXY_TOKEN_HEADER}: <token>, or put /_t/<token> before the path in the agent's base URL`,
  )
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}
