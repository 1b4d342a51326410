import type { ObservedCause } from './analyze-request.ts'
import type { Cost, ExchangeRecord } from './exchange-record.ts'
import type { ObservedSession, Tally } from './session-table.ts'
import { addToTally, emptyTally, isBreak } from './session-table.ts'

/** A session as the live page lists it. */
export interface LiveSession extends Readonly<Tally> {
  readonly key: string
  readonly by: string
  readonly agent: string
  readonly api: string
  /** cache-read / input tokens, as the provider reported them; null before any usage. */
  readonly hitRate: number | null
  readonly lastAt: number
}

/** A request whose prefix broke (a conversation request with a cause other than `none` and `first`). */
export interface LiveBreak {
  readonly id: number
  readonly at: number
  readonly session: string
  readonly cause: ObservedCause
  readonly phrase: string
  readonly explanation: string
  readonly lostTokens: number
  readonly cost: Cost | null
  readonly providerDiagnosis?: string
}

/** A summary request: what it cost, and what a rewrite saved. */
export interface LiveCompaction {
  readonly id: number
  readonly at: number
  readonly session: string | null
  readonly agent: string
  readonly phrase: string | null
  readonly cost: Cost | null
  readonly usage: ExchangeRecord['usage']
  readonly rewrite: ExchangeRecord['rewrite'] | null
  readonly failOpen: string | null
}

/** `/_warmfold/state.json`: what the live page shows. */
export interface LiveSnapshot {
  readonly at: number
  readonly price: string | null
  readonly totals: Readonly<Tally> & { readonly unreadable: number; readonly hitRate: number | null }
  readonly sessions: readonly LiveSession[]
  /** The latest breaks, newest first. */
  readonly breaks: readonly LiveBreak[]
  /** The latest compactions, newest first. */
  readonly compactions: readonly LiveCompaction[]
  /** The latest unreadable requests, newest first: id and reason. */
  readonly unreadable: ReadonlyArray<{ readonly id: number; readonly reason: string }>
}

function hitRate(tally: Tally): number | null {
  return tally.inputTokens ? tally.cacheReadTokens / tally.inputTokens : null
}

/** The live page's running totals and latest items (each list bounded to `keep`). */
export class LiveState {
  private readonly totals = emptyTally()
  private unreadableCount = 0
  private readonly breaks: LiveBreak[] = []
  private readonly compactions: LiveCompaction[] = []
  private readonly unreadable: Array<{ id: number; reason: string }> = []

  constructor(private readonly keep: number) {}

  add(record: ExchangeRecord): void {
    addToTally(this.totals, record)
    if (record.unreadable) {
      this.unreadableCount++
      this.push(this.unreadable, { id: record.id, reason: record.unreadable })
    }
    if (record.kind === 'compaction')
      this.push(this.compactions, {
        id: record.id,
        at: record.at,
        session: record.session,
        agent: record.agent,
        phrase: record.phrase ?? null,
        cost: record.cost,
        usage: record.usage,
        rewrite: record.rewrite ?? null,
        failOpen: record.failOpen?.reason ?? null,
      })
    if (isBreak(record))
      this.push(this.breaks, {
        id: record.id,
        at: record.at,
        session: record.session ?? '',
        cause: record.cause as ObservedCause,
        phrase: record.phrase ?? '',
        explanation: record.explanation ?? '',
        lostTokens: record.lostTokens ?? 0,
        cost: record.breakCost ?? null,
        ...(record.providerDiagnosis === undefined ? {} : { providerDiagnosis: record.providerDiagnosis }),
      })
  }

  snapshot(at: number, sessions: readonly ObservedSession[], price: string | null): LiveSnapshot {
    return {
      at,
      price,
      totals: {
        requests: this.totals.requests,
        unreadable: this.unreadableCount,
        breaks: this.totals.breaks,
        compactions: this.totals.compactions,
        inputTokens: this.totals.inputTokens,
        cacheReadTokens: this.totals.cacheReadTokens,
        hitRate: hitRate(this.totals),
        cost: this.totals.cost,
        costUsd: this.totals.costUsd,
      },
      sessions: sessions.map((session) => ({
        key: session.key,
        by: session.by,
        agent: session.agent,
        api: session.api,
        requests: session.requests,
        compactions: session.compactions,
        breaks: session.breaks,
        inputTokens: session.inputTokens,
        cacheReadTokens: session.cacheReadTokens,
        hitRate: hitRate(session),
        cost: session.cost,
        costUsd: session.costUsd,
        lastAt: session.lastAt,
      })),
      breaks: this.breaks.toReversed(),
      compactions: this.compactions.toReversed(),
      unreadable: this.unreadable.toReversed(),
    }
  }

  private push<T>(list: T[], item: T): void {
    list.push(item)
    if (list.length > this.keep) list.shift()
  }
}
