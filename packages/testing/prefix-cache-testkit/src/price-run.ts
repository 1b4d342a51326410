import type { Divergence } from './cache-observation.ts'
import { costFloor } from './cost-floor.ts'
import type { PriceProfile } from './price-profile.ts'
import type { BilledTokens, Cost } from './request-cost.ts'
import { costUsd, requestCost, sumCosts } from './request-cost.ts'
import type { WorkloadRun } from './run-workload.ts'

/** One request of a priced run. */
export interface PricedRequest extends BilledTokens {
  /** Position in the session, from 0. */
  readonly index: number
  readonly purpose: string
  readonly promptTokens: number
  /** Its cost in input-token units. */
  readonly cost: number
  /** Where the cache saw it diverge from the best-matching earlier request. */
  readonly divergence: Divergence
}

/** A run's money: what it cost, its floor and how close it came. */
export interface PricedRun {
  readonly price: PriceProfile
  /** In input-token units (1 = one uncached prompt token). */
  readonly cost: Cost
  readonly costUsd: number | null
  /**
   * The cost of the same requests under a perfect cache (see `costFloor`), or null for a run
   * measured by a real cache (`runProbedWorkload`): the floor counts simulated tokens, the real
   * cache its tokenizer's, and the two do not compare.
   */
  readonly floor: Cost | null
  /** floor.total / cost.total: 1 when the run paid only what its schedule makes unavoidable; null without a floor. */
  readonly efficiency: number | null
  readonly requests: readonly PricedRequest[]
  /** The cost of each summary call, in order (input-token units). */
  readonly summaryCosts: readonly number[]
}

/**
 * Prices a workload run: each request's cached, written and uncached prompt tokens and its
 * scripted output, under `price`, with the run's floor and efficiency (a probed run has neither).
 */
export function priceRun(run: WorkloadRun, price: PriceProfile): PricedRun {
  const observations = [...run.conversation, ...run.summaryCalls, ...run.prewarmCalls].toSorted(
    (left, right) => left.index - right.index,
  )
  if (observations.length !== run.outputTokens.length)
    throw new RangeError(
      `priceRun: ${observations.length} observed requests but ${run.outputTokens.length} output counts`,
    )
  const first = observations[0]?.index ?? 0
  const costs: Cost[] = []
  const requests = observations.map((observation, position): PricedRequest => {
    const outputTokens = run.outputTokens[position] as number
    const cost = requestCost({ ...observation, outputTokens }, price)
    costs.push(cost)
    return {
      index: observation.index - first,
      purpose: observation.purpose,
      promptTokens: observation.promptTokens,
      cachedTokens: observation.cachedTokens,
      cacheWriteTokens: observation.cacheWriteTokens,
      uncachedTokens: observation.uncachedTokens,
      outputTokens,
      cost: cost.total,
      divergence: observation.divergence,
    }
  })
  const cost = sumCosts(costs)
  const floor = 'probeRecords' in run ? null : costFloor(run.requests, run.outputTokens, price).cost
  return {
    price,
    cost,
    costUsd: costUsd(cost, price),
    floor,
    efficiency: floor === null ? null : cost.total === 0 ? 1 : floor.total / cost.total,
    requests,
    summaryCosts: requests.filter((request) => request.purpose === 'compaction').map((request) => request.cost),
  }
}
