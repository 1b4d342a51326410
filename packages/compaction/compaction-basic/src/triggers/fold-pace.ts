/** One request boundary: when it was, and how large the request was. */
interface BoundarySample {
  readonly at: number
  readonly tokens: number
}

/**
 * What a fold is expected to overlap: how many request boundaries it spans and how much the request
 * grows meanwhile.
 */
export interface FoldOverlap {
  /**
   * Request boundaries one fold spans: ⌈fold duration / time between boundaries⌉, at least 1 (a swap
   * waits for a boundary).
   */
  readonly boundaries: number
  /** Tokens the request grows by per boundary, on average. */
  readonly tokensPerBoundary: number
}

/**
 * How fast one session's request grows and how long its folds take, in this process: the inputs
 * of the adaptive soft threshold (see {@link softThreshold}). Growth and time per boundary are
 * averaged from the first boundary after the request last shrank (a fold or prune landed) to the
 * latest one, so they span the tool steps, model calls and pauses the conversation really has.
 * They are counted per boundary, not per second, because a fold can only be swapped in at one.
 */
export class FoldPace {
  private since?: BoundarySample
  private latest?: BoundarySample
  private intervals = 0
  /** The growth of each interval since the last shrink, oldest first (at most {@link GROWTH_HISTORY}). */
  private readonly growths: number[] = []
  private foldMs?: number

  /** A request boundary at `at` (engine clock, ms) with a request of `tokens` tokens. */
  boundary(at: number, tokens: number): void {
    if (!this.latest || tokens < this.latest.tokens) {
      this.since = { at, tokens }
      this.intervals = 0
      this.growths.length = 0
    } else {
      this.intervals++
      this.growths.push(tokens - this.latest.tokens)
      if (this.growths.length > GROWTH_HISTORY) this.growths.shift()
    }
    this.latest = { at, tokens }
  }

  /**
   * The most the request grew by over `boundaries` consecutive boundaries since it last shrank (the
   * last {@link GROWTH_HISTORY} of them; with fewer seen, all of them and the largest once more for each
   * missing one; 0 before two boundaries). A session whose steps are uneven (a large tool result every
   * few steps) can grow this much before a fold spanning `boundaries` is in hand, far more than the average.
   */
  largestGrowth(boundaries: number): number {
    const growths = this.growths
    if (growths.length === 0 || boundaries <= 0) return 0
    if (growths.length <= boundaries)
      return growths.reduce((sum, growth) => sum + growth, 0) + (boundaries - growths.length) * Math.max(...growths)
    let window = growths.slice(0, boundaries).reduce((sum, growth) => sum + growth, 0)
    let largest = window
    for (let end = boundaries; end < growths.length; end++) {
      window += (growths[end] as number) - (growths[end - boundaries] as number)
      largest = Math.max(largest, window)
    }
    return largest
  }

  /** A fold (sync or background) of this session had its summary in hand after `readyAfterMs`. */
  foldTook(readyAfterMs: number): void {
    if (Number.isFinite(readyAfterMs) && readyAfterMs >= 0) this.foldMs = readyAfterMs
  }

  /**
   * What the next fold is expected to overlap. Before a fold of the session finished in this
   * process, a fold is assumed to span {@link FIRST_FOLD_BOUNDARIES} boundaries. Undefined until
   * two boundaries at different times followed the last shrink.
   */
  overlap(): FoldOverlap | undefined {
    const { since, latest, intervals, foldMs } = this
    if (!since || !latest || intervals === 0 || latest.at <= since.at) return undefined
    const msPerBoundary = (latest.at - since.at) / intervals
    const boundaries = foldMs === undefined ? FIRST_FOLD_BOUNDARIES : Math.max(1, Math.ceil(foldMs / msPerBoundary))
    return { boundaries, tokensPerBoundary: (latest.tokens - since.tokens) / intervals }
  }
}

/** How many of a session's latest boundary-to-boundary growths {@link FoldPace} keeps. */
export const GROWTH_HISTORY = 64

/**
 * How many request boundaries a session's first fold is assumed to span, before one was timed:
 * a summary decodes 1.5k-4k tokens (20-100 s at 40-80 tokens/s), about one or two agent steps.
 */
export const FIRST_FOLD_BOUNDARIES = 2

/** The shares of H the adaptive soft threshold starts at and keeps between. */
export const ADAPTIVE_START = Object.freeze({ first: 0.8, min: 0.5, max: 0.95 })

/**
 * The soft threshold S, in tokens, below the pressure threshold `thresholdTokens` (H). A number
 * `startRatio` fixes S at `startRatio × H`. `adaptive` starts a session's first fold at 0.8 × H
 * and each later one at `H − (boundaries + 1) × tokensPerBoundary`: the fold arms at the first
 * boundary at or above S, so at most `boundaries` boundaries' growth below H, and has its summary
 * in hand by the time the request reaches H. Kept within 0.5 × H..0.95 × H.
 */
export function softThreshold(
  thresholdTokens: number,
  startRatio: number | 'adaptive',
  overlap: FoldOverlap | undefined,
): number {
  if (startRatio !== 'adaptive') return Math.floor(startRatio * thresholdTokens)
  const { first, min, max } = ADAPTIVE_START
  if (overlap === undefined) return Math.floor(first * thresholdTokens)
  const soft = thresholdTokens - (overlap.boundaries + 1) * overlap.tokensPerBoundary
  return Math.floor(Math.min(max * thresholdTokens, Math.max(min * thresholdTokens, soft)))
}

/**
 * The tokens of the tail a background fold's snapshot keeps verbatim: the retain budget less the
 * growth of `boundaries + 1` boundaries, the lead S keeps below H. What the request grows by
 * while the fold runs stays verbatim after the swap too, so the request after the swap is about
 * the size a synchronous fold leaves, and the region is as large as a synchronous fold's at H:
 * retaining only `boundaries` boundaries less folded one boundary's growth less per fold, and at
 * 32k, where a step is a large share of the budget, that was a fourth fold in 60 steps (+3.7 %
 * cost). Never less than a quarter of the budget.
 */
export function snapshotRetainTokens(retainTokens: number, overlap: FoldOverlap | undefined): number {
  const growth = overlap ? (overlap.boundaries + 1) * overlap.tokensPerBoundary : 0
  return retainTokens - Math.min(Math.max(0, growth), (retainTokens * 3) / 4)
}
