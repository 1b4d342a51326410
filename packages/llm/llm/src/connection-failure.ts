/**
 * Error codes of a connection that could not be made or was lost: Node's socket errors, and those
 * of undici (the engine of Node's `fetch`): `UND_ERR_SOCKET` is its "other side closed", the
 * others its own connect, header and body timeouts.
 */
export const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set(
  (
    'ECONNRESET ECONNREFUSED ECONNABORTED EPIPE ETIMEDOUT EHOSTUNREACH ENETUNREACH ENETDOWN ENOTFOUND EAI_AGAIN ' +
    'UND_ERR_SOCKET UND_ERR_CLOSED UND_ERR_CONNECT_TIMEOUT UND_ERR_HEADERS_TIMEOUT UND_ERR_BODY_TIMEOUT'
  ).split(' '),
)

/**
 * What Node's `fetch` throws itself: `fetch failed` when no response arrived, `terminated` when the
 * body stream broke after the headers (the server closed or reset the socket mid-response).
 */
const FETCH_FAILURE_MESSAGES: ReadonlySet<string> = new Set(['fetch failed', 'terminated'])

/** How deep a `cause` chain is followed (SDKs wrap the socket error two or three times). */
const MAX_CAUSE_DEPTH = 8

/**
 * Describes `error` when it, or an error down its `cause` chain, is a connection that could not be
 * made or was lost, before or in the middle of a response: an error whose `code` is in
 * {@link CONNECTION_ERROR_CODES}, or Node `fetch`'s own `TypeError` (`fetch failed`,
 * `terminated`). SDKs wrap these in errors of their own (the AI SDK reports a socket closed
 * mid-stream as an `APICallError` "Failed to process successful response" with status 200), so
 * the whole chain is read. The description joins the distinct messages down the chain and the
 * code, e.g. `terminated: other side closed (UND_ERR_SOCKET)`. `undefined` for anything else: an
 * HTTP error, a body that is not JSON, an abort.
 *
 * Adapters map such a failure to `NETWORK`, which is retryable (before any output reached the
 * caller).
 */
export function describeConnectionFailure(error: unknown): string | undefined {
  const messages: string[] = []
  let code: string | undefined
  let found = false
  const seen = new Set<unknown>()
  for (
    let current = error, depth = 0;
    current instanceof Error && !seen.has(current) && depth < MAX_CAUSE_DEPTH;
    depth++
  ) {
    seen.add(current)
    const own = (current as { code?: unknown }).code
    if (typeof own === 'string' && CONNECTION_ERROR_CODES.has(own)) {
      found = true
      code ??= own
    }
    if (current instanceof TypeError && FETCH_FAILURE_MESSAGES.has(current.message)) found = true
    if (current.message !== '' && !messages.includes(current.message)) messages.push(current.message)
    current = (current as { cause?: unknown }).cause
  }
  if (!found) return undefined
  return `${messages.join(': ')}${code === undefined ? '' : ` (${code})`}`
}
