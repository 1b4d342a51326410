import { millisecondsRange, millisecondsSchema, numberProblem, showValue, unknownKeyMessage } from '@warmfold/llm'
import Schema from 'schemastery'

/**
 * Engine config key `background`: summarize the last sent request beside the conversation once
 * the request passes a soft threshold, and swap the checkpoint in at a request boundary, so the
 * conversation rarely waits for a summary's decode at the pressure threshold.
 */
export interface BackgroundFoldConfig {
  /** Start background folds. Default true. */
  enabled?: boolean
  /**
   * The soft threshold S: a background fold starts at the first request boundary at or above S
   * where it is worth its call (the swap would not discard it as stale).
   * A number in (0, 1) fixes S at `startRatio × H` (H: the pressure threshold). `'adaptive'`
   * (the default): `H − (request boundaries a fold spans + 1) × tokens the request grows by per
   * boundary` (a fold spans the last fold's duration over the time per boundary, 2 boundaries
   * before one was timed), 0.8 × H until the session's pace is known, always within
   * 0.5 × H..0.95 × H, so the summary is in hand about when the request reaches H; and a fold
   * starts only where it summarizes at least as much as the fold at H would (else H folds).
   */
  startRatio?: number | 'adaptive'
  /**
   * At H with a fold in flight, how long the conversation waits for it (ms) before folding
   * synchronously instead. Default 300000 (5 min).
   */
  maxWaitMs?: number
  /**
   * After a swap, send the post-swap prefix once with a 1-token output cap in the background, so
   * the provider has written it before the next conversation request reads it (that request then
   * prefills nothing). Costs one more read of the prefix and one output token. Default false.
   */
  prewarm?: boolean
}

/** `background` with defaults applied. */
export type ResolvedBackgroundFold = Readonly<Required<BackgroundFoldConfig>>

const KEYS = ['enabled', 'startRatio', 'maxWaitMs', 'prewarm']

/** The `background` schema (typed by hand, like `idle`'s). */
export function backgroundFoldSchema(): Schema<BackgroundFoldConfig> {
  return Schema.object({
    enabled: Schema.boolean().description('Summarize beside the conversation from the soft threshold on.'),
    startRatio: Schema.union([Schema.const('adaptive' as const), Schema.number()]).description(
      "Soft threshold as a share of the pressure threshold (0..1), or 'adaptive'.",
    ),
    maxWaitMs: millisecondsSchema().description(
      'At the pressure threshold, how long to wait for a fold in flight (ms).',
    ),
    prewarm: Schema.boolean().description('Write the post-swap prefix to the cache before the next request.'),
  }).description('Background folds.')
}

/** What is wrong with `background`, or undefined. */
export function backgroundFoldProblem(background: BackgroundFoldConfig | undefined): string | undefined {
  if (background === undefined) return undefined
  for (const key of Object.keys(background))
    if (!KEYS.includes(key)) return `background: ${unknownKeyMessage(key, KEYS)}`
  const ratio = background.startRatio
  if (ratio !== undefined && ratio !== 'adaptive' && !(typeof ratio === 'number' && ratio > 0 && ratio < 1))
    return `background.startRatio must be 'adaptive' or a number in (0, 1), got ${showValue(ratio)}`
  // Checked here as well as by the schema: the AI SDK bridge checks its `background` option with this alone.
  if (background.maxWaitMs !== undefined)
    return numberProblem('background.maxWaitMs', background.maxWaitMs, millisecondsRange())
  return undefined
}

export function resolveBackgroundFold(background: BackgroundFoldConfig | undefined): ResolvedBackgroundFold {
  return Object.freeze({
    enabled: background?.enabled ?? true,
    startRatio: background?.startRatio ?? 'adaptive',
    maxWaitMs: background?.maxWaitMs ?? 300_000,
    prewarm: background?.prewarm ?? false,
  })
}
