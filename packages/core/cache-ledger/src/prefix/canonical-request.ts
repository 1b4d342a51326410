/** Every wire request API whose bodies are canonicalized, in the order the docs list them. */
export const REQUEST_APIS = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'] as const

/** A wire request API. */
export type RequestApi = (typeof REQUEST_APIS)[number]

/** A request as it went over the wire: its parsed JSON body, its headers and (when known) its url. */
export interface WireRequest {
  readonly url?: string
  readonly body: Readonly<Record<string, unknown>>
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>
}

/** One message of a canonical request. */
export interface CanonicalMessage {
  /** The message's role (Responses items without one: their `type`). */
  readonly role: string
  /** Index in the body's own list (`messages`, `input` or `contents`). */
  readonly index: number
  /** What is serialized: the message with its role, content normalized, noise removed. */
  readonly value: Readonly<Record<string, unknown>>
}

/**
 * A request body reduced to what shapes the prompt a provider caches: the envelope (model and
 * the prompt-shaping settings, under canonical names), the system prompt, the tools and the
 * messages. Per-request noise (stream flags, metadata, user ids, output budgets,
 * `cache_control` markers, item ids) is gone, so two requests that would be cached alike are equal.
 */
export interface CanonicalRequest {
  readonly api: RequestApi
  readonly model: string | null
  /** Canonical setting name → JSON value; keys are compared with canonical JSON. */
  readonly envelope: Readonly<Record<string, unknown>>
  /**
   * The system prompt (with leading system/developer messages for the OpenAI APIs), or undefined
   * when there is none.
   */
  readonly system?: unknown
  readonly tools: readonly unknown[]
  readonly messages: readonly CanonicalMessage[]
}

/** A body that does not have the shape of its API: its line is reported as unreadable, with this message. */
export class RequestShapeError extends Error {
  override readonly name = 'RequestShapeError'
}

/** How an API's top-level keys map to the envelope. */
export interface EnvelopeRules {
  /** Keys read into system, tools and messages (or by the API's own code). */
  readonly structural: readonly string[]
  /** Per-request noise that never shapes the prompt. */
  readonly noise: readonly string[]
  /** Raw key → canonical envelope name. */
  readonly renames: Readonly<Record<string, string>>
}

/**
 * The envelope of `body`: every top-level key that is neither structural nor noise, renamed to
 * its canonical name. A key the rules do not know is kept under its own name, so a setting the
 * doctor has never heard of still splits cache families instead of being hidden.
 */
export function collectEnvelope(
  body: Readonly<Record<string, unknown>>,
  rules: EnvelopeRules,
): Record<string, unknown> {
  const envelope: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) {
    if (value === null || value === undefined || rules.structural.includes(key) || rules.noise.includes(key)) continue
    envelope[rules.renames[key] ?? key] = key === 'stop' || key === 'stop_sequences' ? stopList(value) : value
  }
  return envelope
}

/** A stop setting as a list: `"x"` and `["x"]` stop alike. */
export function stopList(value: unknown): unknown {
  return typeof value === 'string' ? [value] : value
}

/** `value` as an array, or a RequestShapeError naming `what`. */
export function arrayOf(value: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(value)) throw new RequestShapeError(`${what} must be an array, got ${describeJson(value)}`)
  return value
}

/** `value` as an object, or a RequestShapeError naming `what`. */
export function recordOf(value: unknown, what: string): Readonly<Record<string, unknown>> {
  if (!isRecord(value)) throw new RequestShapeError(`${what} must be an object, got ${describeJson(value)}`)
  return value
}

/** `value` as an array, `[]` when it is undefined or null, or a RequestShapeError naming `what`. */
export function listOf(value: unknown, what: string): readonly unknown[] {
  return value === undefined || value === null ? [] : arrayOf(value, what)
}

/** `value` as a string, or a RequestShapeError naming `what`. */
export function stringOf(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new RequestShapeError(`${what} must be a string, got ${describeJson(value)}`)
  return value
}

/** The body's `model` as a string or null, or a RequestShapeError when it is something else. */
export function modelOf(body: Readonly<Record<string, unknown>>): string | null {
  return body.model === undefined || body.model === null ? null : stringOf(body.model, 'model')
}

/** Whether `value` is a plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A short description of a JSON value for error messages. */
export function describeJson(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `the string ${preview(JSON.stringify(value))}`
  if (typeof value === 'object') return 'an object'
  return `${typeof value} ${String(value)}`
}

function preview(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}
