import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { isRecord, seenRequestOf } from '@warmfold/cache-ledger/prefix'
import type { Exchange, ExchangeObserver, RememberedRequest } from '../proxy-exchange.ts'
import { redactUrl } from '../redact-headers.ts'
import type { ExchangeRecord } from './exchange-record.ts'
import { unreadableRecord } from './exchange-record.ts'
import type { LiveSnapshot } from './live-state.ts'
import { LiveState } from './live-state.ts'
import type { ParsedBody } from './observe-exchange.ts'
import { observeExchange, parseBody } from './observe-exchange.ts'
import { canonicalOf, scanConversations } from './conversation-scan.ts'
import { logLineOf, ObserverLog } from './observer-log.ts'
import type { ProxyStore } from './proxy-store.ts'
import type { RecalledConversation } from './recalled-conversations.ts'
import { RecalledConversations } from './recalled-conversations.ts'
import type { ObserverOptions, ResolvedObserverOptions } from './observer-options.ts'
import { resolveObserverOptions } from './observer-options.ts'
import { renderLivePage } from './render-live-page.ts'
import { addToTally, SessionTable } from './session-table.ts'

/** What the observer holds, for tests and the bench: it follows the live sessions, not the requests seen. */
export interface ObserverMemory {
  readonly sessions: number
  /** Whole request bodies held (one per session at most: its last conversation request). */
  readonly rememberedBodies: number
  readonly internedTexts: number
  readonly trieNodes: number
  /** Exchanges waiting for analysis. */
  readonly queued: number
}

/**
 * The proxy's observer (`observe/`): takes every finished exchange off the forward's path, groups
 * requests into sessions, explains each request's cache use (predicted from the first divergent
 * byte, reported by the provider, the cause of a break, the cost), appends one line per exchange
 * to the log, and serves the live page. Remembers each session's last conversation request for
 * the warm room ({@link lastConversationFor}).
 */
export class ProxyObserver implements ExchangeObserver {
  readonly options: ResolvedObserverOptions
  private readonly table: SessionTable
  private readonly live: LiveState
  private readonly log: ObserverLog | undefined
  private readonly store: ProxyStore | undefined
  private readonly recalled: RecalledConversations | undefined
  private queue: Exchange[] = []
  /** The next exchange to analyse in `queue` (the ones before it are done). */
  private head = 0
  private scheduled: ReturnType<typeof setImmediate> | undefined
  private closing: Promise<void> | undefined
  /** Analysis failures (the exchange is still logged, as unreadable); the latest 20. */
  readonly errors: Error[] = []

  /** @throws RangeError naming an option that is out of range. */
  constructor(options: ObserverOptions = {}) {
    this.options = resolveObserverOptions(options)
    this.table = new SessionTable(this.options.maxSessions, this.options.cacheTtlMs * this.options.forgetAfterTtls)
    this.live = new LiveState(this.options.liveItems)
    this.log =
      this.options.log === undefined ? undefined : new ObserverLog(this.options.log, (error) => this.fail(error))
    this.store = options.store
    this.recalled = options.store && new RecalledConversations(options.store, this.options.cacheTtlMs, this.options.now)
  }

  /**
   * With a shared store (`store`): brings in the other replicas' last conversation requests of
   * `api` within the cache TTL, so {@link lastConversationFor} finds the one a summary request
   * repeats although another replica forwarded it. True when any was not held before.
   */
  async recall(api: RequestApi, _json: Readonly<Record<string, unknown>>): Promise<boolean> {
    try {
      return (await this.recalled?.recall(api)) ?? false
    } catch (error) {
      this.fail(new Error(`recalling from the store failed: ${(error as Error).message}`, { cause: error }))
      return false
    }
  }

  /**
   * Queues `exchange`; the analysis runs on later turns of the event loop (one exchange a turn), in
   * the order exchanges came.
   */
  observe(exchange: Exchange): void {
    if (this.closing) {
      this.fail(new Error(`exchange ${exchange.request.id} observed after close(): not analysed or logged`))
      return
    }
    this.queue.push(exchange)
    this.scheduled ??= setImmediate(() => this.step())
  }

  /**
   * The remembered conversation request of `api` whose messages are the longest prefix of `json`'s
   * messages but the last, forwarded within the cache TTL of now; else the latest one of which those
   * messages (two or more) are a prefix; Gemini contents compared without call ids and thought
   * signatures (the seam's contract, `RequestMemory.lastConversationFor`). Undefined when none is
   * held or `json` is not a body of `api`. Analyses what is still queued first, so a summary request
   * that follows its conversation request at once finds it.
   */
  lastConversationFor(api: RequestApi, json: Readonly<Record<string, unknown>>): RememberedRequest | undefined {
    this.drain()
    return this.conversationFor(api, json)
  }

  /** {@link lastConversationFor} over what is analysed so far (the analysis itself asks this way). */
  private conversationFor(api: RequestApi, json: Readonly<Record<string, unknown>>): RememberedRequest | undefined {
    const canonical = isRecord(json) ? canonicalOf(api, json) : undefined
    if (!canonical) return undefined
    const seen = seenRequestOf(canonical, this.table.interner, 0)
    try {
      const messages = seen.layout.segments.length - seen.layout.headSegments
      const found = this.table.index.longestPrefix(api, seen.layout, this.options.now(), this.options.cacheTtlMs, {
        end: messages - 1,
        accept: (entry) => entry.session.last === entry,
      })
      if (found) return found.remembered
    } finally {
      this.table.release(seen.layout)
    }
    return scanConversations(api, json, this.heldConversations(api))
  }

  /** Each session's last conversation request of `api` within the cache TTL, and those recalled from other replicas. */
  private heldConversations(api: RequestApi): RecalledConversation[] {
    const now = this.options.now()
    const held = this.table
      .list()
      .flatMap((session) =>
        session.last?.api === api && now - session.last.at <= this.options.cacheTtlMs ? [session.last] : [],
      )
    return [...held, ...(this.recalled?.candidates(api) ?? [])]
  }

  /**
   * The last conversation request of each session of `api` forwarded within the cache TTL (and those
   * recalled from other replicas), latest first.
   */
  recentConversations(api: RequestApi): RememberedRequest[] {
    this.drain()
    return this.heldConversations(api)
      .toSorted((left, right) => right.at - left.at)
      .map((entry) => entry.remembered)
  }

  /** The live page (`/_warmfold/`): server-rendered HTML that polls `state.json` every 2 s. */
  renderPage(): string {
    return renderLivePage(this.snapshot())
  }

  /** The live state (`/_warmfold/state.json`). */
  snapshot(): LiveSnapshot {
    return this.live.snapshot(this.options.now(), this.table.list(), this.options.prices?.name ?? null)
  }

  /** What the observer holds now. */
  memory(): ObserverMemory {
    const sessions = this.table.list()
    return {
      sessions: sessions.length,
      rememberedBodies: sessions.filter((session) => session.last).length,
      internedTexts: this.table.interner.size,
      trieNodes: this.table.index.nodes,
      queued: this.queue.length - this.head,
    }
  }

  /** Analyses what is queued, writes every line and closes the log. Observing after it is refused. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.drain()
      await Promise.all([this.log?.close(), this.store?.close()])
    })()
    return this.closing
  }

  /**
   * Analyses the oldest queued exchange and yields the event loop before the next one, so a burst
   * of long requests never holds the forward's I/O for more than one analysis at a time.
   */
  private step(): void {
    this.scheduled = undefined
    const exchange = this.queue[this.head]
    if (exchange) {
      this.queue[this.head++] = undefined as unknown as Exchange
      this.process(exchange)
    }
    if (this.head >= this.queue.length) {
      this.queue = []
      this.head = 0
      return
    }
    // A queue that never empties is compacted now and then, so its done slots do not pile up.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
    this.scheduled = setImmediate(() => this.step())
  }

  /** Analyses everything queued, now. */
  private drain(): void {
    if (this.scheduled) clearImmediate(this.scheduled)
    this.scheduled = undefined
    const batch = this.queue.slice(this.head)
    this.queue = []
    this.head = 0
    for (const exchange of batch) this.process(exchange)
  }

  /**
   * `exchange` with a plan that says it was a summary request, when the forward made no plan
   * (warm summaries off) and the `recognize` planner takes it for one; else `exchange` itself.
   */
  private recognized(exchange: Exchange, parsed: ParsedBody): Exchange {
    const { recognize } = this.options
    const { route } = exchange.request
    if (!recognize || exchange.plan || route.kind !== 'generate' || route.api === undefined) return exchange
    const json = 'json' in parsed ? parsed.json : undefined
    if (!isRecord(json)) return exchange
    const plan = recognize.plan(exchange.request, json, {
      lastConversationFor: (api, body) => this.conversationFor(api, body),
    })
    const summary = plan.action === 'rewrite' ? plan.recognition : plan.summary
    if (!summary) return exchange
    const reason =
      plan.action === 'rewrite'
        ? `warm summaries are off: sent as written (a rewrite would replay request ${plan.replays.request.id})`
        : (plan.reason ?? 'left as the agent wrote it')
    return { ...exchange, plan: { action: 'forward', reason, summary } }
  }

  private process(observed: Exchange): void {
    // Parsed once, for the recognition and the analysis.
    const parsed = parseBody(observed.sent)
    const exchange = this.recognized(observed, parsed)
    let record: ExchangeRecord
    let json: Readonly<Record<string, unknown>> | undefined
    try {
      const observed = observeExchange(exchange, this.table, this.options, parsed)
      record = observed.record
      json = observed.json
      const { session, seen } = observed
      if (session && seen) {
        addToTally(session, record)
        const answered = exchange.answer.status < 400
        if (record.kind === 'compaction' && answered) session.summarySince = true
        if (record.kind === 'conversation' && answered && json) {
          if (this.store && !this.options.noBodies)
            this.store.remember({
              replica: this.store.replica,
              sessionKey: session.key,
              api: seen.api,
              id: exchange.request.id,
              at: exchange.request.receivedAt,
              method: exchange.request.method,
              url: redactUrl(exchange.request.url),
              body: exchange.request.body.toString('utf8'),
            })
          this.table.remember({
            id: exchange.request.id,
            api: seen.api,
            layout: seen.layout,
            at: exchange.request.receivedAt,
            seen,
            session,
            remembered: { request: exchange.request, api: seen.api, json, sessionKey: session.key },
          })
        } else this.table.release(seen.layout)
      }
    } catch (error) {
      this.fail(error as Error)
      record = unreadableRecord(exchange, error as Error)
    }
    this.live.add(record)
    try {
      if (this.store) this.store.append(logLineOf(exchange, { ...record, bodyLogged: false }, undefined), record)
      else this.log?.append(JSON.stringify(logLineOf(exchange, record, json)))
    } catch (error) {
      this.fail(error as Error)
    }
  }

  private fail(error: Error): void {
    this.errors.push(error)
    if (this.errors.length > 20) this.errors.shift()
  }
}
