/** One fold of a run, as its timing is recorded: what it took and how long the conversation waited for it. */
export interface FoldStall {
  /** `sync`: the conversation waited for the whole summary call; `background`: it ran beside the conversation. */
  readonly mode: 'sync' | 'background'
  /** The summary call's duration, in milliseconds. */
  readonly foldMs: number
  /** How long the conversation was blocked by this fold, in milliseconds (all of `foldMs` for a sync fold). */
  readonly waitedMs: number
  /**
   * The part of `foldMs` the conversation did not wait for, in milliseconds
   * (`foldMs − waitedMs`; 0 for a sync fold).
   */
  readonly stallSavedMs: number
  /** What the first request after the swap spent prefilling the checkpoint and what follows it, in milliseconds. */
  readonly postSwapPrefillMs: number
  /**
   * Set when the fold's result was thrown away: why, and what the summary call cost
   * (in the price profile's input-token units).
   */
  readonly discarded?: { readonly reason: string; readonly costUnits: number }
}

/** The waits of a run's folds, in milliseconds. */
export interface StallSummary {
  /** Every fold, discarded ones included. */
  readonly folds: number
  /** The sum of every fold's `waitedMs`. */
  readonly totalWaitMs: number
  /** Nearest-rank percentiles of `waitedMs` over every fold (see {@link nearestRankPercentile}); null without folds. */
  readonly p50WaitMs: number | null
  readonly p90WaitMs: number | null
  /** The longest wait; null without folds. */
  readonly maxWaitMs: number | null
  /** The sum of every fold's `stallSavedMs`. */
  readonly totalStallSavedMs: number
  /** Folds whose result was thrown away. */
  readonly discardedFolds: number
  /** What the discarded folds' summary calls cost together, in input-token units. */
  readonly discardedCostUnits: number
}

/**
 * Sums up the waits of a run's folds. A discarded fold counts like any other: if the
 * conversation waited for it, that wait happened.
 * @throws TypeError naming the fold's index, the field and the value when a record is not a {@link FoldStall}
 *   (a mode other than `sync` or `background`, a duration that is negative or not finite, a
 *   discard without a reason or with a cost that is negative or not finite).
 */
export function stallSummary(folds: readonly FoldStall[]): StallSummary {
  folds.forEach(checkFold)
  const waits = folds.map((fold) => fold.waitedMs)
  const discarded = folds.filter((fold) => fold.discarded !== undefined)
  return {
    folds: folds.length,
    totalWaitMs: sum(waits),
    p50WaitMs: nearestRankPercentile(waits, 50),
    p90WaitMs: nearestRankPercentile(waits, 90),
    maxWaitMs: waits.length ? Math.max(...waits) : null,
    totalStallSavedMs: sum(folds.map((fold) => fold.stallSavedMs)),
    discardedFolds: discarded.length,
    discardedCostUnits: sum(discarded.map((fold) => fold.discarded!.costUnits)),
  }
}

/**
 * The nearest-rank percentile: the smallest of `values` that at least `percent` % of them are
 * less than or equal to, i.e. the value at rank ⌈percent / 100 × n⌉ (from 1) in ascending order.
 * It is always one of the values (never interpolated): for 1..10, p50 is 5 and p90 is 9; for one
 * value, every percentile is that value. Null for no values.
 * @throws RangeError when `percent` is not an integer from 1 to 100.
 */
export function nearestRankPercentile(values: readonly number[], percent: number): number | null {
  if (!Number.isInteger(percent) || percent < 1 || percent > 100)
    throw new RangeError(`nearestRankPercentile: percent must be an integer from 1 to 100, got ${percent}`)
  if (values.length === 0) return null
  const sorted = values.toSorted((left, right) => left - right)
  // Integer arithmetic: 0.9 × 30 is 27.000000000000004 in floating point, whose ceiling is 28.
  const rank = Math.ceil((percent * sorted.length) / 100)
  return sorted[rank - 1] as number
}

const DURATIONS = ['foldMs', 'waitedMs', 'stallSavedMs', 'postSwapPrefillMs'] as const

function checkFold(fold: FoldStall, index: number): void {
  const where = `stallSummary: fold ${index}`
  if (fold.mode !== 'sync' && fold.mode !== 'background')
    throw new TypeError(`${where}: "mode" must be "sync" or "background", got ${describe(fold.mode)}`)
  for (const key of DURATIONS) {
    const value = fold[key]
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw new TypeError(`${where}: "${key}" must be a finite number of milliseconds ≥ 0, got ${describe(value)}`)
  }
  if (fold.discarded === undefined) return
  const { reason, costUnits } = fold.discarded
  if (typeof reason !== 'string' || reason.trim() === '')
    throw new TypeError(`${where}: "discarded.reason" must be a non-empty string, got ${describe(reason)}`)
  if (typeof costUnits !== 'number' || !Number.isFinite(costUnits) || costUnits < 0)
    throw new TypeError(`${where}: "discarded.costUnits" must be a finite number ≥ 0, got ${describe(costUnits)}`)
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0)
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  return JSON.stringify(value) ?? String(value)
}
