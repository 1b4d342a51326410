import { createHash } from 'node:crypto'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import type { RememberedRequest, SummaryRecognition } from '../proxy-exchange.ts'
import { withoutCallIdPrefixes } from './gemini-call-ids.ts'

/** A summary request the planner rewrote, kept so a call that extends it is rewritten the same way. */
export interface RewrittenRequest {
  readonly api: RequestApi
  /** Digest of the original request's messages (their JSON; Gemini call ids without prefix). */
  readonly digest: string
  /** Digest of its messages but the last (its history without its instruction). */
  readonly historyDigest: string
  /** How many messages the original had. */
  readonly length: number
  /** The body that was sent instead. */
  readonly json: Readonly<Record<string, unknown>>
  readonly replays: RememberedRequest
  readonly recognition: SummaryRecognition
  /** When the original arrived (ms since the epoch). */
  readonly at: number
}

/**
 * A bounded map from the digest of an original summary request's messages to its rewrite,
 * oldest dropped first. A later request that extends it by the model's answer and a new
 * instruction finds it, so it can extend what was actually sent: either its messages plus those
 * two, or (Gemini CLI 0.61.0's verification call) its history without its instruction plus those
 * two. Entries older than the TTL are not found.
 */
export class RewrittenRequests {
  private readonly entries = new Map<string, RewrittenRequest>()

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`RewrittenRequests: capacity must be a positive integer, got ${String(capacity)}`)
  }

  get size(): number {
    return this.entries.size
  }

  /** Remembers a rewrite of the request whose messages were `items`. */
  remember(entry: Omit<RewrittenRequest, 'digest' | 'historyDigest' | 'length'>, items: readonly unknown[]): void {
    const [historyDigest, digest] = digestsOf(entry.api, items)
    this.entries.delete(digest)
    this.entries.set(digest, { ...entry, digest, historyDigest, length: items.length })
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string)
  }

  /**
   * The rewrite whose messages (or history) `items` extend by two messages (an answer, then an
   * instruction), made at most `ttlMs` before `now`; undefined when there is none. Hashes once,
   * and only when a length fits.
   */
  extended(api: RequestApi, items: readonly unknown[], now: number, ttlMs: number): RewrittenRequest | undefined {
    let digest: string | undefined
    for (const entry of this.entries.values()) {
      if (entry.api !== api || now - entry.at > ttlMs) continue
      const whole = entry.length === items.length - 2
      if (!whole && entry.length !== items.length - 1) continue
      digest ??= digestsOf(api, items.slice(0, -2))[1]
      if ((whole ? entry.digest : entry.historyDigest) === digest) return entry
    }
    return undefined
  }
}

/**
 * The digests of `items` but the last, and of all of them, in one pass: each message's JSON text
 * (a call that extends a request repeats its messages as the agent serialized them, so plain
 * `JSON.stringify` of the parsed messages is stable; Gemini call ids without their prefix).
 */
function digestsOf(api: RequestApi, items: readonly unknown[]): readonly [history: string, whole: string] {
  const normalized = api === 'gemini' ? withoutCallIdPrefixes(items) : items
  const hash = createHash('sha256').update(api)
  let history: string | undefined
  normalized.forEach((item, index) => {
    if (index === normalized.length - 1) history = hash.copy().digest('base64')
    hash.update('\n').update(JSON.stringify(item) ?? 'null')
  })
  const whole = hash.digest('base64')
  return [history ?? whole, whole]
}
