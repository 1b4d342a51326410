/** What replaces a secret wherever an adapter would otherwise print or persist it. */
export const REDACTED = '[redacted]'

/** Links followed down an error's `cause` chain; a longer (or cyclic) chain is cut there. */
const MAX_CAUSE_DEPTH = 8

/**
 * Removes one secret (an API key) from everything an adapter throws, logs or hands to the
 * session log. Servers echo the key back in error bodies, usage objects and stream events;
 * each of these passes through one of the methods below before it leaves the adapter.
 */
export interface SecretRedactor {
  /** `text` with every occurrence of the secret replaced by {@link REDACTED}. */
  text(text: string): string
  /**
   * A copy of a JSON-like value (plain objects, arrays, strings) with the secret replaced in
   * every string and every key. Returns `value` itself when nothing held the secret.
   */
  value<T>(value: T): T
  /**
   * A stand-in for an error (or any thrown value) to attach as a `cause`: when the secret occurs
   * in a message or stack anywhere down the `cause` chain, a copy of the chain with `name`,
   * `code`, message and stack kept (redacted); otherwise `error` itself.
   */
  error(error: unknown): unknown
}

/**
 * The redactor for `secret`, or for each of several secrets in turn; without a secret (a keyless
 * server) every method returns its input. Pass the key exactly as it is sent: trimmed (see
 * {@link normalizeApiKey}), because HTTP clients strip surrounding whitespace from header values
 * and servers echo what they got.
 */
export function secretRedactor(secret: string | readonly string[] | undefined): SecretRedactor {
  const secrets = (typeof secret === 'string' ? [secret] : (secret ?? [])).filter((each) => each !== '')
  if (!secrets.length) return { text: (text) => text, value: (value) => value, error: (error) => error }
  const text = (input: string) =>
    secrets.reduce((value, each) => (value.includes(each) ? value.split(each).join(REDACTED) : value), input)
  const holds = (input: unknown) => typeof input === 'string' && secrets.some((each) => input.includes(each))
  return {
    text,
    value: <T>(value: T): T => redactValue(value, text, holds) as T,
    error: (error: unknown) => (chainHolds(error, holds, 0) ? redactChain(error, text, holds, 0) : error),
  }
}

/**
 * An API key as a config value or an environment variable holds it, ready to send: surrounding
 * whitespace (a trailing `\n` or `\r\n` from a file, a CRLF env file or a k8s secret, stray
 * spaces) is removed. HTTP clients drop it anyway, and redaction must search for the key the
 * server saw. Every error names `source` (e.g. `AnthropicAdapter config: apiKey`), never the value.
 * @throws TypeError when nothing is left after trimming, or when whitespace or a control
 *   character remains inside the key (no HTTP header can carry it, and the client's error would
 *   quote the key).
 */
export function normalizeApiKey(value: string, source: string): string {
  const key = value.trim()
  if (key === '')
    throw new TypeError(
      `${source} is empty after trimming whitespace; set the key itself, without surrounding whitespace only`,
    )
  if (
    /\s/.test(key) ||
    [...key].some((character) => character.charCodeAt(0) < 0x20 || character.charCodeAt(0) === 0x7f)
  ) {
    throw new TypeError(
      `${source} has whitespace or a control character inside the key (not only around it); an HTTP header cannot ` +
        `carry it`,
    )
  }
  return key
}

function redactValue(value: unknown, text: (input: string) => string, holds: (input: unknown) => boolean): unknown {
  if (typeof value === 'string') return text(value)
  if (Array.isArray(value)) {
    const items = value.map((item) => redactValue(item, text, holds))
    return items.every((item, index) => item === value[index]) ? value : items
  }
  if (!isPlainObject(value)) return value
  let changed = false
  const copy: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    const redacted = redactValue(item, text, holds)
    if (redacted !== item || holds(key)) changed = true
    copy[text(key)] = redacted
  }
  return changed ? copy : value
}

function chainHolds(error: unknown, holds: (input: unknown) => boolean, depth: number): boolean {
  if (depth > MAX_CAUSE_DEPTH) return false
  if (!(error instanceof Error))
    return holds(error) || (error !== null && typeof error === 'object' && holds(safeJson(error)))
  return (
    holds(error.message) || holds(error.stack) || chainHolds((error as { cause?: unknown }).cause, holds, depth + 1)
  )
}

function redactChain(
  error: unknown,
  text: (input: string) => string,
  holds: (input: unknown) => boolean,
  depth: number,
): unknown {
  if (depth > MAX_CAUSE_DEPTH) return undefined
  if (!(error instanceof Error)) {
    if (typeof error === 'string' || isPlainObject(error) || Array.isArray(error))
      return redactValue(error, text, holds)
    // Some other object (a class instance): its JSON form, redacted, is all that can be kept safely.
    return text(safeJson(error as object) ?? String(error))
  }
  const inner = (error as { cause?: unknown }).cause
  const cause = inner === undefined ? undefined : redactChain(inner, text, holds, depth + 1)
  const copy = new Error(text(error.message), cause === undefined ? undefined : { cause })
  copy.name = error.name
  copy.stack = error.stack === undefined ? undefined : text(error.stack)
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' || typeof code === 'number') Object.assign(copy, { code })
  return copy
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function safeJson(value: object): string | undefined {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}
