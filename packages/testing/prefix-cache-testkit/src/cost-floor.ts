import type { GenerateOptions } from '@warmfold/llm'
import { CHARS_PER_TOKEN, tokensOf } from './cache-profile.ts'
import { PrefixCache } from './prefix-cache.ts'
import type { PriceProfile } from './price-profile.ts'
import type { BilledTokens, Cost } from './request-cost.ts'
import { requestCost, sumCosts } from './request-cost.ts'

/** The floor of a run: what its own requests would cost under a perfect cache. */
export interface CostFloor {
  readonly cost: Cost
  /** Per request, in order: the tokens the floor bills. */
  readonly requests: readonly BilledTokens[]
}

/**
 * The physical limit of a request schedule: the cost if every prompt token the requests contain
 * were prefilled exactly once and every repeat were a cache read, with the same outputs.
 *
 * A token repeats when an earlier request had the same prefix up to and including it, whatever
 * the envelope (provider, model, effort, temperature, stop) and however long ago: the floor's
 * cache is token-granular, shared by all requests and never expires. A prefilled token is billed
 * as a cache write when a later request reads it, as uncached input when none does. Tokens are
 * the simulator's (`CHARS_PER_TOKEN` characters; reads in whole tokens, as the `bytes` profile).
 *
 * `outputTokens[i]` is the output of `requests[i]`.
 * @throws RangeError when the two lists differ in length.
 */
export function costFloor(
  requests: readonly GenerateOptions[],
  outputTokens: readonly number[],
  price: PriceProfile,
): CostFloor {
  if (requests.length !== outputTokens.length)
    throw new RangeError(`costFloor: ${requests.length} requests but ${outputTokens.length} output counts`)
  const forward = sharedPrefixChars(requests)
  const backward = sharedPrefixChars(requests.toReversed()).toReversed()
  const billed = requests.map((_, index): BilledTokens => {
    const promptTokens = tokensOf(forward[index]?.promptChars as number)
    const cachedTokens = Math.min(promptTokens, Math.floor((forward[index]?.sharedChars as number) / CHARS_PER_TOKEN))
    const readLater = Math.min(promptTokens, Math.floor((backward[index]?.sharedChars as number) / CHARS_PER_TOKEN))
    return {
      cachedTokens,
      uncachedTokens: promptTokens - cachedTokens,
      cacheWriteTokens: Math.max(0, readLater - cachedTokens),
      outputTokens: outputTokens[index] as number,
    }
  })
  return { cost: sumCosts(billed.map((tokens) => requestCost(tokens, price))), requests: billed }
}

/**
 * For each request: its prompt length and the longest prefix it shares with any
 * earlier request of the list, envelope ignored.
 */
function sharedPrefixChars(requests: readonly GenerateOptions[]): { promptChars: number; sharedChars: number }[] {
  const cache = new PrefixCache('bytes')
  return requests.map((request) => {
    // One family for all: the envelope is not part of the prompt's bytes.
    const observation = cache.observe({
      ...request,
      provider: 'floor',
      model: 'floor',
      reasoningEffort: undefined,
      temperature: undefined,
      stop: undefined,
    })
    return { promptChars: observation.promptChars, sharedChars: observation.matchedChars }
  })
}
