import type { PriceProfile } from './price-profile.ts'

/** A cost in "input-token" units (1 = one uncached prompt token), split by what was billed. */
export interface Cost {
  /** Prompt tokens neither read from nor written to the cache, at 1 each. */
  readonly uncachedInput: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly output: number
  readonly total: number
}

/** What one request was billed for, in tokens. */
export interface BilledTokens {
  readonly cachedTokens: number
  /** Uncached prompt tokens, those written to the cache included. */
  readonly uncachedTokens: number
  /** The part of `uncachedTokens` written to the cache (≤ uncachedTokens). */
  readonly cacheWriteTokens: number
  readonly outputTokens: number
}

/**
 * The cost of one request under `price`: uncached tokens that were not written at 1, cache reads
 * at `cacheRead`, cache writes at `cacheWrite`, output tokens at `output`.
 * @throws RangeError when `cacheWriteTokens` is negative or above
 * `uncachedTokens` (a write is an uncached token stored).
 */
export function requestCost(tokens: BilledTokens, price: PriceProfile): Cost {
  const { cachedTokens, uncachedTokens, cacheWriteTokens, outputTokens } = tokens
  if (!(cacheWriteTokens >= 0 && cacheWriteTokens <= uncachedTokens)) {
    throw new RangeError(
      `requestCost: cacheWriteTokens must be from 0 to uncachedTokens (${uncachedTokens}), got ${cacheWriteTokens}`,
    )
  }
  return costOf(
    uncachedTokens - cacheWriteTokens,
    cachedTokens * price.cacheRead,
    cacheWriteTokens * price.cacheWrite,
    outputTokens * price.output,
  )
}

/** The sum of `costs` (all zero for none). */
export function sumCosts(costs: readonly Cost[]): Cost {
  const sum = (part: Exclude<keyof Cost, 'total'>) => costs.reduce((total, cost) => total + cost[part], 0)
  return costOf(sum('uncachedInput'), sum('cacheRead'), sum('cacheWrite'), sum('output'))
}

/** Dollars of `cost` under `price`, or null when the profile has no dollar rate. */
export function costUsd(cost: Cost, price: PriceProfile): number | null {
  return price.usdPerMillionInput === null ? null : (cost.total * price.usdPerMillionInput) / 1_000_000
}

function costOf(uncachedInput: number, cacheRead: number, cacheWrite: number, output: number): Cost {
  return Object.freeze({
    uncachedInput,
    cacheRead,
    cacheWrite,
    output,
    total: uncachedInput + cacheRead + cacheWrite + output,
  })
}
