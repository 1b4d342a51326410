import { balancedCuts, isCheckpointMessage, pinnedSeqs } from '@warmfold/compaction'
import type { Session } from '@warmfold/session'

/** A head region of the surface, by position: nodes `start..end` inclusive. */
export interface SurfaceRegion {
  readonly start: number
  readonly end: number
}

/** A cap on the head's own size, priced separately from the retain walk. */
export interface HeadCap {
  /** Token price of each surface node as the summary call will replay it. */
  readonly prices: readonly number[]
  /** The region's nodes may total at most this. */
  readonly maxTokens: number
}

/**
 * Selects the head region to summarize: walk back from the tail banking `retainTokens` (pinned
 * nodes are banked up front wherever they are, because every fold carries them), keep
 * at least the newest indivisible unit (the last balanced segment), shrink the head until it
 * fits `cap`, then move the cut earlier until it separates no tool call from its result.
 *
 * @param prices token price of each surface node, in order (as the next request will carry it).
 * @param cuts `cuts[k]` is true when a cut before position k is tool-pairing balanced
 *   (length `prices.length + 1`).
 * @param cap optional limit on the head's size (the summary prompt must fit its budget); its
 *   prices may differ from `prices` when a prune pass will rewrite only the tail.
 * @param pinned positions of pinned nodes: they stay on the surface after a fold, so their
 *   prices count against `retainTokens` and the retained tail is that much shorter.
 * @returns the region `0..cut-1`, or `null` when no balanced cut leaves anything to summarize.
 */
export function selectRegion(
  prices: readonly number[],
  cuts: readonly boolean[],
  retainTokens: number,
  cap?: HeadCap,
  pinned?: ReadonlySet<number>,
): SurfaceRegion | null {
  const count = prices.length
  if (count === 0) return null
  let cut = count
  let banked = 0
  for (const position of pinned ?? []) banked += prices[position] as number
  while (cut > 0 && banked < retainTokens) {
    cut -= 1
    if (!pinned?.has(cut)) banked += prices[cut] as number
  }
  // The newest indivisible unit always stays: the conversation must continue from real messages.
  let newestUnit = count - 1
  while (newestUnit > 0 && !cuts[newestUnit]) newestUnit -= 1
  cut = Math.min(cut, newestUnit)
  if (cap) {
    // A node the cap prices at Infinity (see `pricesWithin`) can never be in the head: cut before
    // the first one. Summing it would make the head Infinity and, after one step back,
    // Infinity − Infinity = NaN, which compares below every budget and left the cap unenforced.
    const excluded = cap.prices.findIndex((price) => !Number.isFinite(price))
    if (excluded !== -1) cut = Math.min(cut, excluded)
    let head = 0
    for (let position = 0; position < cut; position++) head += cap.prices[position] as number
    while (cut > 0 && head > cap.maxTokens) {
      cut -= 1
      head -= cap.prices[cut] as number
    }
  }
  while (cut > 0 && !cuts[cut]) cut -= 1
  return cut > 0 ? { start: 0, end: cut - 1 } : null
}

/**
 * The head region of `session` to summarize, or `null` (see {@link selectRegion}; the session's
 * pinned nodes count against `retainTokens`). A region that is only the previous checkpoint is
 * not compactable: summarizing a summary alone cannot shrink it.
 */
export function selectHeadRegion(
  session: Session,
  prices: readonly number[],
  retainTokens: number,
  cap?: HeadCap,
): SurfaceRegion | null {
  const messages = session.deriveMessages()
  const region = selectRegion(prices, balancedCuts(messages), retainTokens, cap, pinnedPositions(session))
  if (region && region.end === 0 && isCheckpointMessage(messages[0]!)) return null
  return region
}

/** Surface positions of the pinned nodes of `session` (`undefined` when nothing is pinned). */
function pinnedPositions(session: Session): ReadonlySet<number> | undefined {
  const pinned = pinnedSeqs(session)
  if (pinned.size === 0) return undefined
  const positions = new Set<number>()
  for (const [position, seq] of session.surface.nodes.entries()) if (pinned.has(seq)) positions.add(position)
  return positions
}

/** Chooses the largest balanced head whose summary prompt fits (retain 0: overflow, manual, idle). */
export function maximalHead(session: Session): (prices: readonly number[], maxHead: number) => SurfaceRegion | null {
  return (prices, maxHead) => selectHeadRegion(session, prices, 0, { prices, maxTokens: maxHead })
}

/**
 * Head prices that exclude every node from position `limit` on (their price is infinite), so a
 * {@link HeadCap} built on them keeps a region inside the first `limit` nodes: what a fold of
 * the last sent request may summarize while newer messages follow it.
 */
export function pricesWithin(prices: readonly number[], limit: number): number[] {
  return prices.map((price, position) => (position < limit ? price : Number.POSITIVE_INFINITY))
}
