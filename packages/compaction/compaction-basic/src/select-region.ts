/** A head region of the surface, by position: nodes `start..end` inclusive. */
export interface SurfaceRegion {
  readonly start: number
  readonly end: number
}

/**
 * Selects the head region to summarize: walk back from the tail banking `retainTokens`, keep
 * at least the newest indivisible unit (the last balanced segment), then move the cut earlier
 * until it separates no tool call from its result.
 *
 * @param prices token price of each surface node, in order.
 * @param cuts `cuts[k]` is true when a cut before position k is tool-pairing balanced
 *   (length `prices.length + 1`).
 * @returns the region `0..cut-1`, or `null` when no balanced cut leaves anything to summarize.
 */
export function selectRegion(prices: readonly number[], cuts: readonly boolean[], retainTokens: number): SurfaceRegion | null {
  const count = prices.length
  if (count === 0) return null
  let cut = count
  let banked = 0
  while (cut > 0 && banked < retainTokens) {
    cut -= 1
    banked += prices[cut] as number
  }
  // The newest indivisible unit always stays: the conversation must continue from real messages.
  let newestUnit = count - 1
  while (newestUnit > 0 && !cuts[newestUnit]) newestUnit -= 1
  cut = Math.min(cut, newestUnit)
  while (cut > 0 && !cuts[cut]) cut -= 1
  return cut > 0 ? { start: 0, end: cut - 1 } : null
}
