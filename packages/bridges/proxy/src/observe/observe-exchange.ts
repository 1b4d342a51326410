import { createHash } from 'node:crypto'
import type { CanonicalRequest, RequestApi, SeenRequest } from '@warmfold/cache-ledger/prefix'
import { describeJson, isRecord, readWireRequest, seenRequestOf } from '@warmfold/cache-ledger/prefix'
import type { Exchange, ProviderUsage } from '../proxy-exchange.ts'
import type { PromptAnalysis } from './analyze-request.ts'
import { analyzePrompt, charsOf } from './analyze-request.ts'
import type { Cost, ExchangeRecord, RewriteRecord } from './exchange-record.ts'
import { PROXY_LOG_FORMAT } from './exchange-record.ts'
import type { ProxyPrice, ResolvedObserverOptions } from './observer-options.ts'
import { agentOf, sessionKeyOf } from './session-key.ts'
import type { ObservedSession, SessionTable } from './session-table.ts'

/** SHA-256 of `bytes`, hex. */
export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** What `usage` cost at `price` (input-token units, and dollars when the price has a rate); null without either. */
export function costOf(usage: ProviderUsage | undefined, price: ProxyPrice | undefined): Cost | null {
  if (!usage || !price) return null
  const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens)
  const units =
    uncached +
    usage.cacheReadTokens * price.cacheRead +
    usage.cacheWriteTokens * price.cacheWrite +
    usage.outputTokens * price.output
  return { units, usd: unitsUsd(units, price) }
}

function unitsUsd(units: number, price: ProxyPrice): number | null {
  return price.usdPerMillionInput === null ? null : (units * price.usdPerMillionInput) / 1_000_000
}

/** A parsed request body, or why it cannot be read. */
type ReadBody =
  | { readonly json: Readonly<Record<string, unknown>>; readonly canonical: CanonicalRequest }
  | { readonly error: string }

/** A request body parsed as JSON once, or why it is not JSON. */
export type ParsedBody = { readonly json: unknown } | { readonly error: string }

/** `body` parsed as JSON, or why it is not JSON. */
export function parseBody(body: Buffer): ParsedBody {
  try {
    return { json: JSON.parse(body.toString('utf8')) as unknown }
  } catch (error) {
    return { error: `the body is not JSON (${(error as Error).message})` }
  }
}

/** Reads a parsed body as `api` (from the route) would: JSON, an object, the API's shape. */
export function readBody(
  api: RequestApi,
  url: string,
  headers: Readonly<Record<string, string>>,
  parsed: ParsedBody,
): ReadBody {
  if ('error' in parsed) return parsed
  const { json } = parsed
  if (!isRecord(json)) return { error: `the body is not a JSON object but ${describeJson(json)}` }
  const reading = readWireRequest({ url, body: json, headers }, api)
  if ('error' in reading) return { error: reading.error }
  if (reading.canonical.api !== api)
    return { error: `the path says ${api} but the body reads as ${reading.canonical.api}` }
  return { json, canonical: reading.canonical }
}

/** What analysing one exchange produced: its record, and the session's new last conversation request. */
export interface ObservedExchange {
  readonly record: ExchangeRecord
  readonly session?: ObservedSession
  /** The request's own layout, to remember (conversation requests the provider answered) or release. */
  readonly seen?: SeenRequest
  readonly json?: Readonly<Record<string, unknown>>
}

/**
 * Analyses one exchange: reads the body that went upstream (`sent`: the request's own, or a
 * rewrite), finds its session, compares it with the session's last conversation request,
 * predicts its cached tokens, names the cause and prices it. Does not
 * remember anything: the caller decides (and releases `seen` otherwise).
 */
export function observeExchange(
  exchange: Exchange,
  table: SessionTable,
  options: ResolvedObserverOptions,
  parsed: ParsedBody,
): ObservedExchange {
  const { request, answer } = exchange
  const summary = exchange.plan?.action === 'rewrite' || !!exchange.plan?.summary || !!exchange.failOpen
  const agent = agentOf(request.headers)
  const base = {
    log: PROXY_LOG_FORMAT as typeof PROXY_LOG_FORMAT,
    id: request.id,
    at: request.receivedAt,
    method: request.method,
    path: request.url.split('?')[0] as string,
    agent,
    status: answer.status,
    streamed: answer.streamed,
    bodySha256: sha256(exchange.sent),
    bodyBytes: exchange.sent.length,
    bodyLogged: !options.noBodies,
    usage: answer.usage ?? null,
    cost: costOf(answer.usage, options.prices),
    totalMs: answer.totalMs,
    ...(answer.firstByteMs === undefined ? {} : { firstByteMs: answer.firstByteMs }),
    ...(answer.providerDiagnosis === undefined ? {} : { providerDiagnosis: answer.providerDiagnosis }),
    ...(answer.unreadable === undefined ? {} : { answerUnreadable: answer.unreadable }),
    ...(answer.holdReleased === undefined ? {} : { holdReleased: answer.holdReleased }),
    ...(exchange.failOpen
      ? {
          failOpen: {
            reason: exchange.failOpen.reason,
            rewrittenStatus: exchange.failOpen.rewrittenAnswer.status,
            rewrittenUsage: exchange.failOpen.rewrittenAnswer.usage ?? null,
          },
        }
      : {}),
  }
  const api = request.route.api
  if (api === undefined || request.route.kind !== 'generate')
    return { record: { ...base, kind: 'other', api: api ?? null, session: null, sessionBy: null } }
  const read = readBody(api, request.url, request.headers, parsed)
  if ('error' in read)
    return {
      record: { ...base, kind: 'unreadable', api, session: null, sessionBy: null, unreadable: read.error },
    }
  const seen = seenRequestOf(read.canonical, table.interner, request.id, request.receivedAt)
  const session = table.place(
    api,
    sessionKeyOf(api, request.headers, read.json),
    seen.layout,
    request.receivedAt,
    agent,
  )
  const compared = session.last
  const analysis = analyzePrompt(seen, request.receivedAt, compared, {
    usage: answer.usage,
    summarySince: session.summarySince,
    cacheTtlMs: options.cacheTtlMs,
    providerToleranceTokens: options.providerToleranceTokens,
  })
  const price = options.prices
  const record: ExchangeRecord = {
    ...base,
    kind: summary ? 'compaction' : 'conversation',
    api,
    session: session.key,
    sessionBy: session.by,
    ...analysis,
    breakCost: price ? breakCostOf(analysis.lostTokens, price) : null,
    ...(exchange.plan?.action === 'rewrite' ? { rewrite: rewriteRecord(exchange, table, analysis) } : {}),
  }
  return { record, session, seen, json: read.json }
}

/** What re-prefilling `lostTokens` cost over reading them from the cache. */
function breakCostOf(lostTokens: number, price: ProxyPrice): Cost {
  const units = lostTokens * (1 - price.cacheRead)
  return { units, usd: unitsUsd(units, price) }
}

/**
 * The rewrite's record: both hashes, the request it replays, the diff, and the tokens the original
 * and the rewrite would each prefill against the session's last conversation request (predicted
 * at the scale of what was sent).
 */
function rewriteRecord(exchange: Exchange, table: SessionTable, sentAnalysis: PromptAnalysis): RewriteRecord {
  const plan = exchange.plan as Extract<Exchange['plan'], { action: 'rewrite' }>
  const sentRewritten = exchange.sent.equals(plan.body) && !exchange.sent.equals(exchange.request.body)
  const scale =
    sentAnalysis.tokenScale === 'reported' ? (exchange.answer.usage?.inputTokens ?? 0) / sentAnalysis.promptChars : 0.25
  const uncached = (body: Buffer): number => {
    const read = readBody(plan.replays.api, exchange.request.url, exchange.request.headers, parseBody(body))
    if ('error' in read) return Number.NaN
    const seen = seenRequestOf(read.canonical, table.interner, exchange.request.id)
    try {
      const replayed = plan.replays.request.id
      const compared = table.list().find((session) => session.last?.id === replayed)?.last
      const analysis = analyzePrompt(seen, exchange.request.receivedAt, compared, {
        usage: undefined,
        summarySince: false,
        cacheTtlMs: Number.POSITIVE_INFINITY,
        providerToleranceTokens: 0,
      })
      return Math.round((charsOf(seen.layout) - analysis.predictedCachedChars) * scale)
    } finally {
      table.release(seen.layout)
    }
  }
  const original = uncached(exchange.request.body)
  const rewritten = uncached(plan.body)
  return {
    sent: sentRewritten ? 'rewritten' : 'original',
    recognition: plan.recognition,
    originalSha256: sha256(exchange.request.body),
    rewrittenSha256: sha256(plan.body),
    replays: plan.replays.request.id,
    diff: plan.diff,
    predictedUncachedTokens: { original, rewritten },
    savedTokens: original - rewritten,
    predictedCachedTokens: sentAnalysis.predictedCachedTokens,
    reportedCachedTokens: exchange.answer.usage?.cacheReadTokens ?? null,
  }
}
