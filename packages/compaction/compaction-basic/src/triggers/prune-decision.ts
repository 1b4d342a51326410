import type { PruneDecisionData } from '@warmfold/compaction'
import type { CachePrices } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import type { TokenMeasurement } from '@warmfold/token-meter'
import type { PlannedPrune } from '../engine-services.ts'

/** Prices assumed for a model whose `ModelInfo` has no `cachePrices`: the dearest common case for a rewrite. */
export const DEFAULT_CACHE_PRICES: CachePrices = Object.freeze({ read: 0.1, write: 1.25 })

/** The most requests a prune is credited with: a guess this far ahead is no longer a forecast. */
export const MAX_REQUESTS_SERVED = 64

/** Steps the growth estimate averages over. */
const GROWTH_STEPS = 8

/** What the prune decision weighs. */
export interface PruneDecisionInput {
  readonly session: Session
  /** The pass that would land (its `position`s are surface positions). */
  readonly plan: readonly PlannedPrune[]
  /** The measurement the plan was made on. */
  readonly measurement: TokenMeasurement
  readonly thresholdTokens: number
  readonly prices: CachePrices
  /** The provider's cache TTL for the route, in ms; undefined: the entry never expires. */
  readonly cacheTtlMs: number | undefined
  /**
   * When the session's last conversation request was built, in ms on the engine's clock; undefined
   * when not seen (a resume).
   */
  readonly lastRequestAt: number | undefined
  readonly now: number
}

/**
 * Whether a prune pass that alone clears the pressure should land, or the engine should fold
 * instead (where rule C4 makes the prune free: the retained tail is prefilled again after the
 * checkpoint anyway).
 *
 * A pass that rewrites cached history makes the next request prefill everything from the first
 * rewritten result on again (`rewrittenTokens`), billed at the write price instead of the read
 * price; it pays off only through the tokens every later request reads fewer (`savedTokens`) over
 * the requests the pruned history serves before the next fold (`requestsServed`, forecast from the
 * session's recent growth per request and bounded by {@link MAX_REQUESTS_SERVED}). So it lands when
 *
 *   savedTokens × requestsServed × read  >  rewrittenTokens × (write − read)
 *
 * and always when the provider no longer holds the prefix (the last request is older than the
 * cache TTL: there is nothing left to break). Without enough steps to forecast growth, a warm
 * rewrite does not land.
 */
export function decidePrune(input: PruneDecisionInput): PruneDecisionData {
  const { plan, measurement, thresholdTokens, prices } = input
  const savedTokens = plan.reduce((sum, entry) => sum + entry.originalTokens - entry.prunedTokens, 0)
  const first = Math.min(...plan.map((entry) => entry.position))
  const prunedPrice = new Map(plan.map((entry) => [entry.position, entry.prunedTokens]))
  const rewrittenTokens = measurement.nodes
    .slice(first)
    .reduce((sum, node, offset) => sum + (prunedPrice.get(first + offset) ?? node.tokens), 0)
  const growthTokens = growthPerRequest(input.session, measurement)
  const headroom = thresholdTokens - (measurement.totalTokens - savedTokens)
  const requestsServed =
    growthTokens === null ? 0 : Math.min(MAX_REQUESTS_SERVED, Math.max(0, Math.ceil(headroom / growthTokens)))
  // An unknown TTL never expires; a request this engine has not seen (before a resume) counts as warm.
  const cacheWarm =
    input.cacheTtlMs === undefined ||
    input.lastRequestAt === undefined ||
    input.now - input.lastRequestAt < input.cacheTtlMs
  const saving = savedTokens * requestsServed * prices.read
  const cost = cacheWarm ? rewrittenTokens * Math.max(0, prices.write - prices.read) : 0
  const land = !cacheWarm || cost === 0 || saving > cost
  const reason = !cacheWarm
    ? 'the provider no longer holds the prefix (the last request is older than the cache TTL), so the rewrite breaks ' +
      'nothing'
    : cost === 0
      ? 'a cached read costs as much as a write here, so the rewrite costs nothing extra'
      : growthTokens === null
        ? 'too few steps are logged to forecast how many requests the pruned history would serve; folding instead'
        : land
          ? `the saving over the next ${requestsServed} requests exceeds the re-prefill the rewrite causes`
          : `the re-prefill the rewrite causes exceeds the saving over the next ${requestsServed} requests; folding ` +
            'instead, where pruning the retained tail is free'
  return Object.freeze({
    action: land ? 'prune' : 'fold',
    results: plan.length,
    savedTokens,
    rewrittenTokens,
    requestsServed,
    growthTokens,
    cacheWarm,
    cacheRead: prices.read,
    cacheWrite: prices.write,
    saving: round(saving),
    cost: round(cost),
    reason,
  })
}

/**
 * Average tokens one request adds: the surface from the {@link GROWTH_STEPS}-th newest assistant
 * message on, over that many steps (each step appends an answer and its tool results); null with
 * fewer than two steps on the surface.
 */
function growthPerRequest(session: Session, measurement: TokenMeasurement): number | null {
  const nodes = measurement.nodes
  let steps = 0
  let tokens = 0
  for (let position = nodes.length - 1; position >= 0 && steps < GROWTH_STEPS; position--) {
    const node = nodes[position] as { seq: number; tokens: number }
    tokens += node.tokens
    if (session.eventAt(node.seq)?.type === 'assistant/message') steps += 1
  }
  return steps < 2 || tokens === 0 ? null : tokens / steps
}

function round(value: number): number {
  return Math.round(value * 100) / 100
}

/**
 * The route's cache prices: the model's `cachePrices`, else {@link DEFAULT_CACHE_PRICES}.
 * @throws TypeError naming the model when a price is not a finite number ≥ 0.
 */
export function cachePricesOf(prices: CachePrices | undefined, target: string): CachePrices {
  if (prices === undefined) return DEFAULT_CACHE_PRICES
  for (const key of ['read', 'write'] as const) {
    const value = prices[key]
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw new TypeError(
        `compaction for ${target}: ModelInfo.cachePrices.${key} must be a finite number ≥ 0, got ${String(value)}`,
      )
  }
  return prices
}
