import type { Cost, PriceProfile } from '@warmfold/prefix-cache-testkit'
import { costUsd, requestCost } from '@warmfold/prefix-cache-testkit'
import { fieldError } from './field-error.ts'
import type { ReportFold, ReportFoldAttempt, ReportFoldAudit, ReportFoldTotals, ReportRequest } from './report-model.ts'

/** One compaction bracket (`compaction/start` … `compaction/end`) as the log tells it. */
interface Bracket {
  readonly compactionId: string
  readonly trigger: string
  readonly line: number
  /** Requests logged before the bracket opened, before its checkpoint landed, before it closed. */
  readonly requestsAtStart: number
  requestsAtCommit?: number
  requestsAtEnd?: number
  endLine?: number
  commitLine?: number
  folded?: { readonly messages: number; readonly tokens: number }
  outcome: ReportFoldAttempt['outcome']
  reason: string | null
  mode: 'sync' | 'background' | null
  waitedMs: number | null
  /** The prices of the calls `compaction/end` lists (`attempts`), for a log without the cache ledger. */
  attemptCosts: Cost[]
}

/** Dropped items a fold row names (the audit section lists more). */
const NAMED_DROPPED = 3

/**
 * Gathers the compaction brackets of a log while it is read, then makes the report's fold rows:
 * one per fold point, the brackets that were thrown away (discarded, refused) before a checkpoint
 * landed in the same row as that checkpoint's bracket, so what the fold cost and made the user wait
 * is on one row, not spread over rows the reader would add up.
 */
export class FoldRows {
  readonly #brackets: Bracket[] = []
  readonly #open = new Map<string, Bracket>()

  /** A `compaction/start`; `requests` is the number of requests logged before it. */
  start(data: Record<string, unknown>, line: number, requests: number, where: string): void {
    const compactionId = idOf(data, 'compaction/start', where)
    const trigger = typeof data.trigger === 'string' ? data.trigger : 'unknown'
    const bracket: Bracket = {
      compactionId,
      trigger,
      line,
      requestsAtStart: requests,
      outcome: 'open',
      reason: null,
      mode: null,
      waitedMs: null,
      attemptCosts: [],
    }
    this.#brackets.push(bracket)
    this.#open.set(compactionId, bracket)
  }

  /** A `compaction/summary` (the checkpoint) and the marker of what it replaced. */
  summary(compactionId: string, line: number, requests: number, folded: { messages: number; tokens: number }): void {
    const bracket = this.#open.get(compactionId)
    if (!bracket) return
    bracket.requestsAtCommit = requests
    bracket.commitLine = line
    bracket.folded = folded
  }

  /** A `compaction/end`, with its timing as the report read it. */
  end(
    data: Record<string, unknown>,
    line: number,
    requests: number,
    timing: { mode: 'sync' | 'background'; waitedMs: number } | undefined,
    price: PriceProfile,
    where: string,
  ): void {
    const compactionId = idOf(data, 'compaction/end', where)
    const bracket = this.#open.get(compactionId)
    if (!bracket) return
    this.#open.delete(compactionId)
    bracket.requestsAtEnd = requests
    bracket.endLine = line
    bracket.mode = timing?.mode ?? null
    bracket.waitedMs = timing?.waitedMs ?? null
    const discarded = data.discarded as { reason?: unknown; detail?: unknown } | undefined
    if (typeof data.error !== 'string') bracket.outcome = bracket.folded ? 'committed' : 'failed'
    else {
      bracket.outcome = discarded ? 'discarded' : 'failed'
      bracket.reason = discarded ? `${String(discarded.reason)}: ${String(discarded.detail)}` : data.error
    }
    if (Array.isArray(data.attempts))
      for (const attempt of data.attempts as Array<{ usage?: Record<string, unknown> }>)
        if (attempt?.usage) bracket.attemptCosts.push(usageCost(attempt.usage, price))
  }

  /**
   * The fold rows and their totals. A request logged inside a bracket that is not a conversation
   * request is one of its summary calls; in a log without the cache ledger (`usageOnly`) the calls
   * of a bracket that committed nothing are priced from its `compaction/end` `attempts` instead,
   * the only place such a log keeps them.
   */
  rows(
    requests: readonly ReportRequest[],
    audits: readonly ReportFoldAudit[],
    price: PriceProfile,
    usageOnly: boolean,
  ): { folds: ReportFold[]; totals: ReportFoldTotals } {
    const attempts = this.#brackets.map((bracket) => attemptOf(bracket, requests, usageOnly))
    const folds: ReportFold[] = []
    let first = 0
    this.#brackets.forEach((bracket, index) => {
      // A row ends with a committed bracket, or with the last one.
      if (bracket.outcome !== 'committed' && index < this.#brackets.length - 1) return
      folds.push(foldOf(bracket, attempts.slice(first, index + 1), requests, audits, price))
      first = index + 1
    })
    const thrown = attempts.filter((attempt) => attempt.outcome === 'discarded' || attempt.outcome === 'failed')
    const thrownCost = thrown.reduce((sum, attempt) => sum + attempt.cost, 0)
    const cost = folds.reduce((sum, fold) => sum + fold.cost, 0)
    return {
      folds,
      totals: {
        folds: folds.filter((fold) => fold.committed).length,
        cost,
        costUsd: usd(cost, price),
        waitedMs: sumOrNull(folds.map((fold) => fold.waitedMs)),
        thrownAway: {
          attempts: thrown.length,
          cost: thrownCost,
          costUsd: usd(thrownCost, price),
          waitedMs: sumOrNull(thrown.map((attempt) => attempt.waitedMs)),
        },
      },
    }
  }
}

function attemptOf(bracket: Bracket, requests: readonly ReportRequest[], usageOnly: boolean): ReportFoldAttempt {
  const end = bracket.requestsAtEnd ?? requests.length
  const calls = requests
    .slice(bracket.requestsAtStart, end)
    .filter((request) => request.purpose !== 'conversation' && request.purpose !== 'prewarm')
  const fromAttempts = usageOnly && bracket.outcome !== 'committed' && bracket.attemptCosts.length > 0
  return {
    compactionId: bracket.compactionId,
    line: bracket.line,
    trigger: bracket.trigger,
    mode: bracket.mode,
    outcome: bracket.outcome,
    reason: bracket.reason,
    summaryCalls: fromAttempts ? bracket.attemptCosts.length : calls.length,
    cost: fromAttempts
      ? bracket.attemptCosts.reduce((sum, cost) => sum + cost.total, 0)
      : calls.reduce((sum, request) => sum + (request.billed?.cost ?? 0), 0),
    waitedMs: bracket.waitedMs,
  }
}

/** The row of the fold point `last` ends, its `attempts` being those of the brackets up to it. */
function foldOf(
  last: Bracket,
  attempts: readonly ReportFoldAttempt[],
  requests: readonly ReportRequest[],
  audits: readonly ReportFoldAudit[],
  price: PriceProfile,
): ReportFold {
  const committed = last.outcome === 'committed'
  const summaryCost = attempts.reduce((sum, attempt) => sum + attempt.cost, 0)
  const afterSwap = committed ? afterSwapOf(requests, last.requestsAtCommit ?? last.requestsAtStart) : null
  const cost = summaryCost + (afterSwap?.cost ?? 0)
  const audit = committed ? audits.find((entry) => entry.compactionId === last.compactionId) : undefined
  return {
    line: (committed ? last.commitLine : last.endLine) ?? last.line,
    afterRequest: (committed ? last.requestsAtCommit : last.requestsAtEnd) ?? last.requestsAtStart,
    committed,
    attempts,
    summaryCalls: attempts.reduce((sum, attempt) => sum + attempt.summaryCalls, 0),
    summaryCost,
    afterSwap,
    cost,
    costUsd: usd(cost, price),
    waitedMs: sumOrNull(attempts.map((attempt) => attempt.waitedMs)),
    folded: committed ? (last.folded ?? null) : null,
    dropped: audit
      ? {
          total: audit.droppedTotal,
          items: audit.dropped.slice(0, NAMED_DROPPED).map((item) => `${item.class} ${item.text}`),
        }
      : null,
  }
}

/**
 * The first conversation request after a checkpoint, with the prewarm requests before it: what
 * the swap makes the conversation prefill again. Null when no conversation request followed.
 */
function afterSwapOf(requests: readonly ReportRequest[], from: number): ReportFold['afterSwap'] {
  let cost = 0
  for (const request of requests.slice(from)) {
    if (request.purpose === 'prewarm') cost += request.billed?.cost ?? 0
    if (request.purpose !== 'conversation') continue
    return { request: request.number, cost: cost + (request.billed?.cost ?? 0) }
  }
  return null
}

function usageCost(usage: Record<string, unknown>, price: PriceProfile): Cost {
  const count = (name: string) => (typeof usage[name] === 'number' ? (usage[name] as number) : 0)
  const written = count('cacheWriteTokens')
  return requestCost(
    {
      cachedTokens: count('cacheReadTokens'),
      uncachedTokens: count('inputTokens') + written,
      cacheWriteTokens: written,
      outputTokens: count('outputTokens'),
    },
    price,
  )
}

function idOf(data: Record<string, unknown>, type: string, where: string): string {
  if (typeof data.compactionId !== 'string')
    throw fieldError(where, `${type} compactionId`, 'a string', data.compactionId)
  return data.compactionId
}

function usd(units: number, price: PriceProfile): number | null {
  return costUsd({ uncachedInput: units, cacheRead: 0, cacheWrite: 0, output: 0, total: units }, price)
}

function sumOrNull(values: ReadonlyArray<number | null>): number | null {
  const known = values.filter((value): value is number => value !== null)
  return known.length ? known.reduce((sum, value) => sum + value, 0) : null
}
