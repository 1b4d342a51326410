/**
 * Header names whose values are credentials. Their values never reach a log, the live page or a
 * store: only the configured upstream sees them (in the forwarded request itself).
 */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
  'set-cookie',
  'x-warmfold-proxy-token',
])

/** What a credential's value is logged as. */
export const REDACTED = '[redacted]'

/**
 * A copy of `headers` (lower-case names) fit for a log: credential values replaced by
 * {@link REDACTED}, every other header kept as it was.
 */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const copy: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers))
    copy[name] = CREDENTIAL_HEADERS.has(name.toLowerCase()) ? REDACTED : value
  return copy
}

/**
 * `url` with credentials in its query (`key=…`, Gemini's API-key parameter) replaced by
 * {@link REDACTED}. `url` is a path with an optional query, as a request line carries it.
 */
export function redactUrl(url: string): string {
  const query = url.indexOf('?')
  if (query === -1) return url
  const params = new URLSearchParams(url.slice(query + 1))
  let changed = false
  for (const name of new Set(params.keys()))
    if (name === 'key' || name === 'api_key' || name === 'access_token') {
      params.set(name, REDACTED)
      changed = true
    }
  return changed ? `${url.slice(0, query)}?${params.toString()}` : url
}
