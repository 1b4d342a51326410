import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import type { Exchange, ProviderUsage, SummaryRecognition } from '../proxy-exchange.ts'
import type { PromptAnalysis } from './analyze-request.ts'

/** Marks a proxy log line's `warmfold` record and its version. */
export const PROXY_LOG_FORMAT = 'warmfold-proxy/1'

/** What tokens cost: input-token units, and dollars when the price has a rate. */
export type Cost = { readonly units: number; readonly usd: number | null }

/** What a rewrite (or a dry run of one) changed and saved. */
export interface RewriteRecord {
  /** `sent`: the rewritten body went upstream; `dry-run`: the original did, the rewrite was only logged. */
  readonly sent: 'rewritten' | 'original'
  readonly recognition: SummaryRecognition
  readonly originalSha256: string
  readonly rewrittenSha256: string
  /** The id of the conversation request it replays. */
  readonly replays: number
  /** The warm room's structural diff, original → rewritten. */
  readonly diff: readonly string[]
  /** Tokens each would prefill (not read from the cache), predicted from its first divergent byte. */
  readonly predictedUncachedTokens: { readonly original: number; readonly rewritten: number }
  /** original − rewritten: what the rewrite saves (or would save) in prefilled tokens. */
  readonly savedTokens: number
  /** Cached tokens predicted for what was sent, and what the provider reported (null without usage). */
  readonly predictedCachedTokens: number
  readonly reportedCachedTokens: number | null
}

/**
 * The analysis of one exchange: the `warmfold` key of its log line, and a row of the live page. A
 * conversation or compaction request's record carries its {@link PromptAnalysis} fields.
 */
export interface ExchangeRecord extends Partial<PromptAnalysis> {
  readonly log: typeof PROXY_LOG_FORMAT
  /** The proxy's request id. */
  readonly id: number
  /** When the request arrived (ms since the epoch). */
  readonly at: number
  /**
   * `conversation`; `compaction` (a summary request: the warm room recognised it, rewrote it, or
   * failed open); `other` (not a generate request: count_tokens, models); `unreadable`.
   */
  readonly kind: 'conversation' | 'compaction' | 'other' | 'unreadable'
  readonly api: RequestApi | null
  readonly method: string
  /** The request path without its query. */
  readonly path: string
  readonly session: string | null
  /** How the session was found: `header …`, `body …`, `containment`. */
  readonly sessionBy: string | null
  readonly agent: string
  readonly status: number
  readonly streamed: boolean
  readonly bodySha256: string
  readonly bodyBytes: number
  /** Whether the body is on the line (false with `noBodies`). */
  readonly bodyLogged: boolean
  readonly usage: ProviderUsage | null
  /** The provider's own miss diagnosis, verbatim. */
  readonly providerDiagnosis?: string
  /** What the request cost (input-token units, dollars when the price has a rate); null without prices or usage. */
  readonly cost: Cost | null
  /** What the break cost: `lostTokens` at (1 − cache-read price); null without prices. */
  readonly breakCost?: Cost | null
  readonly rewrite?: RewriteRecord
  /** The rewritten request failed (status or a tool call) and the original was sent once. */
  readonly failOpen?: {
    readonly reason: string
    readonly rewrittenStatus: number
    readonly rewrittenUsage: ProviderUsage | null
  }
  /** Why the body could not be read (not JSON, not its API's shape). */
  readonly unreadable?: string
  /** Why the answer could not be read (the bytes were passed on). */
  readonly answerUnreadable?: string
  /** A rewrite's answer that showed no text within `maxHoldMs` / `maxHoldBytes`, passed on as it came: why. */
  readonly holdReleased?: string
  readonly firstByteMs?: number
  readonly totalMs: number
}

/** The record of an exchange the observer could not analyse (`error` says why); it is still logged. */
export function unreadableRecord(exchange: Exchange, error: Error): ExchangeRecord {
  return {
    log: PROXY_LOG_FORMAT,
    id: exchange.request.id,
    at: exchange.request.receivedAt,
    kind: 'unreadable',
    api: exchange.request.route.api ?? null,
    method: exchange.request.method,
    path: exchange.request.url.split('?')[0] as string,
    session: null,
    sessionBy: null,
    agent: 'unknown',
    status: exchange.answer.status,
    streamed: exchange.answer.streamed,
    bodySha256: '',
    bodyBytes: Buffer.isBuffer(exchange.sent) ? exchange.sent.length : 0,
    bodyLogged: false,
    usage: exchange.answer.usage ?? null,
    cost: null,
    totalMs: exchange.answer.totalMs,
    unreadable: `the observer could not analyse it: ${error.message}`,
  }
}
