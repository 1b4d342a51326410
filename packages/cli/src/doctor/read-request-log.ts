import { describeJson, isRecord } from '@warmfold/cache-ledger/prefix'
import { linesOf } from '../shared/file-lines.ts'
import { UTF8_BOM } from '../shared/read-flag-file.ts'

/** One request line of a log: the body and what the line says about how it was sent. */
export interface LoggedRequest {
  /** 1-based line number. */
  readonly index: number
  readonly body: Readonly<Record<string, unknown>>
  /** The request URL, when the line was a `{ body, url }` record. */
  readonly url?: string
  /** When the request was sent, in milliseconds (any epoch, the same for the whole log). */
  readonly t?: number
  /** Request headers with lower-case names. */
  readonly headers: Readonly<Record<string, string>>
}

/** A line of the log: a request, or why it holds none. Blank lines carry nothing and are not reported. */
export type LogLine =
  | { readonly kind: 'request'; readonly request: LoggedRequest }
  | { readonly kind: 'unreadable'; readonly index: number; readonly reason: string }

/**
 * Reads a request log line by line (a log of thousands of 100k-character bodies never has to fit
 * in one string): each line is the request body itself or `{ "body": …, "url"?: …, "t"?: ms,
 * "headers"?: … }` (other keys are ignored: a `warmfold proxy` log line adds its analysis under
 * `warmfold`, and one without a body, `--no-bodies`, is reported as unreadable, saying so). A
 * UTF-8 byte order mark before the first line is skipped, whitespace-only lines too; every other
 * line yields a request or an `unreadable` entry saying what is wrong with it.
 */
export async function* readRequestLog(path: string): AsyncGenerator<LogLine> {
  // A byte order mark (Windows editors, PowerShell's Out-File) is not part of the first request (alone on the line,
  // `trim` finds the line blank).
  for await (const [index, line] of linesOf(path))
    yield parseLogLine(index === 1 && line.startsWith(UTF8_BOM) ? line.slice(1) : line, index)
}

/**
 * Objects and arrays nested deeper than this make a line unreadable. Real request bodies nest a few
 * dozen levels at most (a tool's JSON schema); JSON.parse takes any depth, but canonicalizing and
 * comparing a body recurses once per level, and a line nested many thousand levels deep would
 * overflow the stack and end the whole run.
 */
export const MAX_JSON_DEPTH = 1000

/** Parses one non-blank line (`index` is its 1-based number). */
export function parseLogLine(text: string, index: number): LogLine {
  const unreadable = (reason: string): LogLine => ({ kind: 'unreadable', index, reason })
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return unreadable(`not JSON (${(error as Error).message}): ${preview(text)}`)
  }
  if (nestedDeeperThan(value, MAX_JSON_DEPTH))
    return unreadable(
      `objects and arrays nested deeper than ${MAX_JSON_DEPTH} levels; no API takes such a body: ${preview(text)}`,
    )
  if (!isRecord(value)) return unreadable(`not a JSON object but ${describeJson(value)}`)
  if (!('body' in value) && isRecord(value.warmfold)) return unreadable(proxyLineWithoutBody(value.warmfold))
  if (!('body' in value)) return { kind: 'request', request: { index, body: value, headers: {} } }
  let body = value.body
  if (typeof body === 'string') {
    // Some loggers keep the body as the raw text that went over the wire.
    try {
      body = JSON.parse(body)
    } catch (error) {
      return unreadable(`"body" is a string but not JSON (${(error as Error).message}): ${preview(body as string)}`)
    }
    if (nestedDeeperThan(body, MAX_JSON_DEPTH))
      return unreadable(
        `"body" holds objects and arrays nested deeper than ${MAX_JSON_DEPTH} levels; no API takes such a body`,
      )
  }
  if (!isRecord(body)) return unreadable(`"body" must be the request body (a JSON object), got ${describeJson(body)}`)
  if (value.url !== undefined && typeof value.url !== 'string')
    return unreadable(`"url" must be a string, got ${describeJson(value.url)}`)
  if (value.t !== undefined && (typeof value.t !== 'number' || !Number.isFinite(value.t)))
    return unreadable(`"t" must be a number of milliseconds, got ${describeJson(value.t)}`)
  const headers: Record<string, string> = {}
  if (value.headers !== undefined) {
    if (!isRecord(value.headers)) return unreadable(`"headers" must be an object, got ${describeJson(value.headers)}`)
    for (const [name, header] of Object.entries(value.headers)) {
      const text =
        Array.isArray(header) && header.every((item) => typeof item === 'string') ? header.join(', ') : header
      if (typeof text !== 'string')
        return unreadable(`header ${JSON.stringify(name)} must be a string, got ${describeJson(header)}`)
      headers[name.toLowerCase()] = text
    }
  }
  return {
    kind: 'request',
    request: {
      index,
      body,
      headers,
      ...(value.url === undefined ? {} : { url: value.url }),
      ...(value.t === undefined ? {} : { t: value.t as number }),
    },
  }
}

/**
 * Why a `warmfold proxy` log line holds no body: the proxy ran with `--no-bodies` (a digest
 * instead), or the request was not one to diagnose (count_tokens, a models list).
 */
function proxyLineWithoutBody(record: Readonly<Record<string, unknown>>): string {
  const what = `${String(record.method ?? '')} ${String(record.path ?? '')}`.trim()
  if (record.bodyLogged === false)
    return (
      `a warmfold proxy line (${what}) logged without its body (--no-bodies: sha256 ` +
      `${String(record.bodySha256)}); nothing to diagnose`
    )
  return `a warmfold proxy line (${what}) without a request body to diagnose (${String(record.kind)} request)`
}

/**
 * Whether `value` nests objects and arrays more than `limit` levels deep (without recursion: the
 * point is to refuse what recursion cannot take).
 */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<readonly [unknown, number]> = [[value, 1]]
  while (stack.length) {
    const [item, depth] = stack.pop() as readonly [unknown, number]
    if (typeof item !== 'object' || item === null) continue
    if (depth > limit) return true
    for (const child of Array.isArray(item) ? item : Object.values(item))
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
  }
  return false
}

function preview(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}
