import type { Context } from '@cordisjs/core'
import { balancedCuts } from '@warmfold/compaction'
import type { Session } from '@warmfold/session'
import type { CompactionBudget } from '../config/compaction-budget.ts'
import { emptyCheckpointTokens } from '../fold/compact-head.ts'
import type { PreparedHead } from '../fold/compact-head.ts'
import type { FoldPace } from './fold-pace.ts'
import { softThreshold } from './fold-pace.ts'
import { StaleHistory, stalePause } from './stale-history.ts'

/** What a background fold prepared at a request boundary would do, known before its summary call is made. */
export interface FoldForecastInput {
  /** The request now, in tokens: the snapshot (the last answered request) and whatever followed it. */
  readonly totalTokens: number
  /** Tokens the checkpoint would take off the surface: the region less the pinned and kept messages it carries. */
  readonly shadowedTokens: number
  /** The region's surface tokens, carried messages included. */
  readonly regionTokens: number
  /** The fewest tokens the checkpoint can have: a checkpoint of an empty summary. */
  readonly checkpointTokens: number
  /**
   * How much the request is expected to grow before the swap (the boundaries the fold spans times the
   * growth per boundary, plus what stale folds of the session were underestimated by; 0 for an idle fold).
   */
  readonly growthTokens: number
  /** The soft threshold S the swap validates against: the request after the swap must be below it. */
  readonly softTokens: number
  /**
   * The fold on the turn's path this one stands in for, at the pressure threshold H (undefined: a fixed
   * `startRatio`, where the host chose how early to fold, or an idle fold).
   */
  readonly sync?: SyncFold
}

/** What a fold on the turn's path at the pressure threshold summarizes: `H − fixed − retain`, within the head cap. */
export interface SyncFold {
  /** The pressure threshold H. */
  readonly thresholdTokens: number
  /** The system prompt and tools: the request less its surface. */
  readonly fixedTokens: number
  /** The retain budget: the tail a fold keeps verbatim. */
  readonly retainTokens: number
  /** Tokens of the largest head a summary call can take (whole units within its prompt budget): no fold folds more. */
  readonly headCapTokens: number
  /**
   * How far below that the background fold's region may fall: its cut lands on a message boundary at or
   * before its budget, on average about half a boundary's growth before it.
   */
  readonly toleranceTokens: number
  /**
   * The most the request grew by over as many consecutive boundaries as the fold spans, since it last
   * shrank: what it may grow by before the summary is in hand (uneven steps make the average too hopeful).
   */
  readonly worstGrowthTokens: number
}

/** Whether to start the fold: `projectedTokens` is the request expected right after its swap. */
export type FoldForecast =
  | { readonly start: true; readonly projectedTokens: number }
  | {
      readonly start: false
      /**
       * `stale`: the swap would find the request after it at or above S and discard the fold;
       * `small`: the fold would summarize less than the fold on the turn's path it stands in for;
       * `paused`: stale discards in a row paused the session's background folds (`stalePause`).
       */
      readonly reason: 'stale' | 'small' | 'paused'
      readonly projectedTokens: number
      readonly detail: string
    }

/**
 * Decides, before its summary call is paid, whether a background fold prepared at a request boundary
 * is worth starting:
 *
 * - **stale**: the request right after the swap is expected at `total − shadowed + checkpoint +
 *   growth`. At or above S the swap would discard the fold (the stale rule): its call paid for
 *   nothing, and a fold on the turn's path after it. With no growth and an empty summary this is a
 *   certainty, not a guess: what the fold keeps verbatim is already above S.
 * - **small** (adaptive S): a session folds once per `region − checkpoint` tokens of growth, so a
 *   fold that summarizes less than a fold at H makes the session fold more often, each fold a summary
 *   call and a re-prefill of the checkpoint and tail. The fold at H would summarize `H − fixed −
 *   retain`; when the summary may not be in hand before the request reaches H (with the steps as
 *   large as the largest seen), the swap comes at that later request, and a fold there would summarize
 *   that much more. At small windows, where one step is a large share of the retain budget, the
 *   snapshot's newest step alone can outweigh the budget, and a fold would fall short by more than the
 *   tolerance.
 *
 * A fold not started is reconsidered at the next boundary; at H the pressure path folds on the turn's
 * path. So a background fold starts only where it does at least as well as that fold.
 */
export function forecastBackgroundFold(input: FoldForecastInput): FoldForecast {
  const { totalTokens, shadowedTokens, regionTokens, checkpointTokens, softTokens } = input
  const growthTokens = Math.max(0, input.growthTokens)
  const projectedTokens = Math.ceil(totalTokens - shadowedTokens + checkpointTokens + growthTokens)
  if (projectedTokens >= softTokens)
    return {
      start: false,
      reason: 'stale',
      projectedTokens,
      detail:
        `the request after the swap would be at least about ${projectedTokens} tokens (${totalTokens} now, ` +
        `${shadowedTokens} folded, an empty checkpoint of ${checkpointTokens}, ${Math.round(growthTokens)} expected ` +
        `growth), at or above the soft threshold (${softTokens})`,
    }
  const sync = input.sync
  if (sync === undefined) return { start: true, projectedTokens }
  const swapAt = Math.max(sync.thresholdTokens, totalTokens + Math.max(growthTokens, sync.worstGrowthTokens))
  const least = Math.min(
    sync.headCapTokens,
    swapAt - sync.fixedTokens - sync.retainTokens - Math.max(0, sync.toleranceTokens),
  )
  if (regionTokens < least)
    return {
      start: false,
      reason: 'small',
      projectedTokens,
      detail:
        `the region (${regionTokens} tokens) is smaller than a fold on the turn's path at about ${Math.ceil(swapAt)} ` +
        `tokens would summarize (at least ${Math.ceil(least)})`,
    }
  return { start: true, projectedTokens }
}

/** What {@link backgroundForecast} reads. */
export interface BackgroundForecastInput {
  readonly session: Session
  readonly prepared: Pick<PreparedHead, 'regionTokens' | 'shadowedTokens' | 'maxHeadTokens'>
  readonly budget: CompactionBudget
  /** `background` at the soft threshold, or `idle` (the agent is idle: no growth, and only the stale rule). */
  readonly trigger: 'background' | 'idle'
  /** `background.startRatio`: `'adaptive'` applies every rule; a fixed S (the host chose how early), the stale one. */
  readonly startRatio: number | 'adaptive'
  readonly pace: FoldPace
}

/**
 * Whether to start the background fold `prepared` for `session` now: not while its stale discards
 * pause background folds (`stalePause`), else {@link forecastBackgroundFold} on the session as the meter
 * measures it now. S is the scheduler's; the expected growth is the boundaries a fold spans times the
 * growth per boundary (the session's pace) plus what its stale folds were underestimated by
 * (`StaleHistory`); the worst growth is the largest growth over that many consecutive boundaries since
 * the request last shrank; the tolerance is half the growth per boundary. A fold it starts is recorded
 * with its forecast, which a stale discard then compares with.
 */
export function backgroundForecast(ctx: Context, input: BackgroundForecastInput): FoldForecast {
  const { session, prepared, budget, pace, trigger } = input
  const measured = ctx.tokenMeter.measure(session)
  const paused = stalePause(session)
  if (paused > 0)
    return {
      start: false,
      reason: 'paused',
      projectedTokens: measured.totalTokens,
      detail: `background folds of this session are paused for ${paused} more fold(s) after stale discards in a row`,
    }
  const overlap = trigger === 'idle' ? undefined : pace.overlap()
  const boundaries = overlap?.boundaries ?? 0
  const perBoundary = overlap?.tokensPerBoundary ?? 0
  const history = StaleHistory.of(session)
  const prices = measured.nodes.map((node) => node.tokens)
  const forecast = forecastBackgroundFold({
    totalTokens: measured.totalTokens,
    shadowedTokens: prepared.shadowedTokens,
    regionTokens: prepared.regionTokens,
    checkpointTokens: emptyCheckpointTokens(ctx),
    growthTokens: trigger === 'idle' ? 0 : boundaries * perBoundary + history.missTokens,
    softTokens: softThreshold(budget.thresholdTokens, input.startRatio, pace.overlap()),
    sync:
      trigger === 'background' && input.startRatio === 'adaptive'
        ? {
            thresholdTokens: budget.thresholdTokens,
            fixedTokens: measured.totalTokens - measured.surfaceTokens,
            retainTokens: budget.retainTokens,
            headCapTokens: headCap(prices, balancedCuts(session.deriveMessages()), prepared.maxHeadTokens),
            toleranceTokens: perBoundary / 2,
            worstGrowthTokens: pace.largestGrowth(boundaries),
          }
        : undefined,
  })
  if (forecast.start) history.started(forecast.projectedTokens)
  return forecast
}

/**
 * Tokens of the longest head of whole units (ending at a balanced cut) within `maxHead`: what the
 * summary budget lets any fold summarize, now or later (a later surface has the same head). `maxHead`
 * when the whole surface fits.
 */
function headCap(prices: readonly number[], cuts: readonly boolean[], maxHead: number): number {
  let total = 0
  let capped = 0
  for (let position = 0; position < prices.length; position++) {
    total += prices[position] as number
    if (total > maxHead) return capped
    if (cuts[position + 1]) capped = total
  }
  return maxHead
}
