import { PRUNE_MARKER, codePointLength } from '@warmfold/compaction-tool-result-pruner'
import type { CachePrices } from '@warmfold/llm'
import { parseCacheProfile } from './cache-profile.ts'
import type { LatencyProfile } from './latency-profile.ts'
import { DEFAULT_LATENCY_PROFILE, LATENCY_PROFILES } from './latency-profile.ts'

/** Which compaction design runs: warmfold, or a reference strategy (see `reference-strategies.ts`). */
export type WorkloadStrategy = 'warmfold' | 'legacy' | 'cold' | 'transcript' | 'toolless' | 'long-instruction'
/** Which pruner runs: budgets that always rewrite but never clear pressure alone, the defaults, or none. */
export type WorkloadPruner = 'rewrite-only' | 'default' | 'none'

/** Every strategy a workload can run. */
export const STRATEGIES: readonly WorkloadStrategy[] = [
  'warmfold',
  'legacy',
  'cold',
  'transcript',
  'toolless',
  'long-instruction',
]
/** The strategies `warmfold bench` runs unless told otherwise. */
export const DEFAULT_STRATEGIES: readonly WorkloadStrategy[] = ['warmfold', 'legacy', 'cold']
/** The values `WorkloadOptions.pruner` accepts. */
export const PRUNERS: readonly WorkloadPruner[] = ['rewrite-only', 'default', 'none']
/** The values `WorkloadOptions.effort` accepts. */
export const EFFORTS: readonly string[] = ['low', 'high', 'max']
/**
 * What the scripted session does: `reading` reads one module per step (filler content, the
 * cache economics workload); `coding` fixes failing tests (paths, commands, compiler and test
 * output, errors, diffs, user corrections) and summarizes lossily, so the fold audit has
 * something to find (see `coding-workload.ts`, `lossy-summary.ts`).
 */
export type WorkloadKind = 'reading' | 'coding'
/** The values `WorkloadOptions.workload` accepts. */
export const WORKLOAD_KINDS: readonly WorkloadKind[] = ['reading', 'coding']

/** What a caller may set. */
export interface WorkloadOptions {
  /** Context window of the scripted model, in tokens. Default 128000. */
  window?: number
  /** Tool steps before the final answer. Default 60. */
  steps?: number
  /** Conversation reasoning effort (`low`, `high`, `max`). Default `max`. */
  effort?: string
  temperature?: number
  stop?: readonly string[]
  /** Default `rewrite-only`. */
  pruner?: WorkloadPruner
  /** Default `warmfold`. */
  strategy?: WorkloadStrategy
  /** Default `reading`. */
  workload?: WorkloadKind
  /**
   * warmfold's artifact trail in every checkpoint (its `artifactTrail.enabled`). Default: on for `warmfold`; the
   * reference strategies never write one.
   */
  artifactTrail?: boolean
  /** Cache profile. Default `bytes`. */
  profile?: string
  /** Send summary calls to `provider/model` instead of the conversation route. */
  summaryRoute?: string
  /** User turns the steps are split across (each ends with a text answer). Default 1; at most `steps`. */
  turns?: number
  /** Virtual seconds between one turn's answer and the next user message (cache entries may expire). Default 0. */
  idleSeconds?: number
  /**
   * Virtual seconds each tool step takes (the tool's own work between a response and the next
   * request), on the clock cache TTLs run on. Default 15. The requests themselves take the time
   * `latency` models.
   */
  stepSeconds?: number
  /**
   * How long requests take on the virtual clock (time to first token, prefill, cache read,
   * decode). Default the `sonnet-class` profile.
   */
  latency?: LatencyProfile
  /**
   * Let the engine fold while the cache is warm when the agent goes idle between turns (its
   * `idle` config, on the simulator's virtual clock and TTL). Default: on for `warmfold`, off
   * for the reference strategies.
   */
  idleCompaction?: boolean
  /**
   * Let the engine fold in the background from its soft threshold on (its `background` config),
   * on the simulator's virtual clock. Default: on for `warmfold`, off for the reference
   * strategies (they model synchronous designs).
   */
  backgroundFold?: boolean
  /**
   * After a background fold's swap, send the post-swap prefix once with a 1-token output cap so
   * the next conversation request reads it (the engine's `background.prewarm`). Default false.
   */
  prewarm?: boolean
  /**
   * What the scripted model says the provider bills for cached tokens (`ModelInfo.cachePrices`:
   * read and write per uncached prompt token), so the engine weighs a prune pass at the prices
   * the run is billed at. Default: none (the engine assumes read 0.1, write 1.25).
   */
  cachePrices?: CachePrices
}

/** Every number the workload uses, derived from the options (each option's default filled in). */
export interface ResolvedWorkload extends Readonly<
  Required<Omit<WorkloadOptions, 'temperature' | 'stop' | 'summaryRoute' | 'cachePrices'>>
> {
  readonly temperature?: number
  readonly stop?: readonly string[]
  readonly summaryRoute?: { readonly provider: string; readonly model: string }
  readonly cachePrices?: CachePrices
  /** Tool steps of each turn, in order: `steps` split as evenly as possible, earlier turns taking the remainder. */
  readonly turnSteps: readonly number[]
  /** Tokens per tool step (window / 24, so about 24 steps fill a window). */
  readonly stepTokens: number
  /** Characters of assistant prose per step (about 45 % of a step). */
  readonly proseChars: number
  /** Characters of a normal tool result (about 45 % of a step, a multiple of 4). */
  readonly resultChars: number
  /** Characters of every third tool result. */
  readonly oversizedResultChars: number
  /** Pruner budgets, or undefined without a pruner. */
  readonly prunerBudget?: { readonly thresholdChars: number; readonly headChars: number; readonly tailChars: number }
  readonly engine: {
    readonly thresholdRatio: number
    readonly retainRatio: number
    readonly headroomTokens: number
    readonly compactionRetries: number
    readonly maxTokens: number
  }
  /** The model's default output cap (window / 16). */
  readonly defaultMaxTokens: number
}

/**
 * Resolves the options into the workload's numbers.
 *
 * With `rewrite-only`, a normal result is `R` characters (a multiple of 4), the pruner threshold
 * is `R + 1` and oversized results are `R + 2`: every oversized result is over budget and gets
 * rewritten, but the rewrite saves one character, which the token meter prices at 0 tokens, so
 * pruning alone never clears the pressure and a summary always follows. With `default` and
 * `none`, oversized results are `max(3R, 10240)` characters and the pruner (if any) has its
 * default budgets.
 *
 * @throws TypeError naming the option and the accepted values.
 */
export function resolveWorkload(options: WorkloadOptions = {}): ResolvedWorkload {
  const window = options.window ?? 128000
  if (!Number.isInteger(window) || window < 4800)
    throw new TypeError(`workload window must be an integer ≥ 4800 tokens, got ${options.window}`)
  const steps = options.steps ?? 60
  if (!Number.isInteger(steps) || steps < 1)
    throw new TypeError(`workload steps must be a positive integer, got ${options.steps}`)
  const effort = oneOf('effort', options.effort, EFFORTS, 'max')
  const pruner = oneOf('pruner', options.pruner, PRUNERS, 'rewrite-only')
  const strategy = oneOf('strategy', options.strategy, STRATEGIES, 'warmfold')
  const workload = oneOf('kind', options.workload, WORKLOAD_KINDS, 'reading')
  if (options.artifactTrail === true && strategy !== 'warmfold')
    throw new TypeError(`workload artifactTrail is warmfold's; strategy ${strategy} writes none`)
  const profile = options.profile ?? 'bytes'
  parseCacheProfile(profile)
  if (options.temperature !== undefined && !Number.isFinite(options.temperature))
    throw new TypeError(`workload temperature must be a finite number, got ${options.temperature}`)
  if (
    options.stop !== undefined &&
    (!Array.isArray(options.stop) || options.stop.some((item) => typeof item !== 'string'))
  )
    throw new TypeError(`workload stop must be an array of strings, got ${JSON.stringify(options.stop)}`)
  const turns = options.turns ?? 1
  if (!Number.isInteger(turns) || turns < 1 || turns > steps)
    throw new TypeError(`workload turns must be an integer from 1 to steps (${steps}), got ${options.turns}`)
  const idleSeconds = options.idleSeconds ?? 0
  if (!Number.isFinite(idleSeconds) || idleSeconds < 0)
    throw new TypeError(`workload idleSeconds must be a finite number ≥ 0, got ${options.idleSeconds}`)
  const stepSeconds = options.stepSeconds ?? 15
  if (!Number.isFinite(stepSeconds) || stepSeconds < 0)
    throw new TypeError(`workload stepSeconds must be a finite number ≥ 0, got ${options.stepSeconds}`)
  const turnSteps = Array.from(
    { length: turns },
    (_, turn) => Math.floor(steps / turns) + (turn < steps % turns ? 1 : 0),
  )
  let summaryRoute: ResolvedWorkload['summaryRoute']
  if (options.summaryRoute !== undefined) {
    const [provider, model, extra] = options.summaryRoute.split('/')
    if (!provider || !model || extra !== undefined)
      throw new TypeError(`workload summaryRoute must be provider/model, got ${JSON.stringify(options.summaryRoute)}`)
    summaryRoute = { provider, model }
  }
  if (options.cachePrices !== undefined) {
    for (const key of ['read', 'write'] as const) {
      const price = options.cachePrices[key]
      if (typeof price !== 'number' || !Number.isFinite(price) || price < 0)
        throw new TypeError(`workload cachePrices.${key} must be a finite number ≥ 0, got ${String(price)}`)
    }
  }
  const stepTokens = Math.floor(window / 24)
  const stepChars = stepTokens * 4
  const proseChars = Math.round(stepChars * 0.45)
  const resultChars = Math.floor((stepChars * 0.45) / 4) * 4
  let prunerBudget: ResolvedWorkload['prunerBudget']
  let oversizedResultChars = Math.max(3 * resultChars, 10240)
  if (pruner === 'rewrite-only') {
    const thresholdChars = resultChars + 1
    const tailChars = Math.min(256, Math.floor(resultChars / 8))
    prunerBudget = { thresholdChars, tailChars, headChars: thresholdChars - codePointLength(PRUNE_MARKER) - tailChars }
    oversizedResultChars = resultChars + 2
  } else if (pruner === 'default') {
    prunerBudget = { thresholdChars: 8192, headChars: 4096, tailChars: 1024 }
  }
  const defaultMaxTokens = Math.floor(window / 16)
  return Object.freeze({
    window,
    steps,
    effort,
    temperature: options.temperature,
    stop: options.stop ? Object.freeze([...options.stop]) : undefined,
    pruner,
    strategy,
    workload,
    artifactTrail: options.artifactTrail ?? strategy === 'warmfold',
    profile,
    summaryRoute,
    turns,
    idleSeconds,
    idleCompaction: options.idleCompaction ?? strategy === 'warmfold',
    backgroundFold: options.backgroundFold ?? strategy === 'warmfold',
    prewarm: options.prewarm ?? false,
    ...(options.cachePrices
      ? { cachePrices: Object.freeze({ read: options.cachePrices.read, write: options.cachePrices.write }) }
      : {}),
    stepSeconds,
    latency: options.latency ?? LATENCY_PROFILES[DEFAULT_LATENCY_PROFILE],
    turnSteps: Object.freeze(turnSteps),
    stepTokens,
    proseChars,
    resultChars,
    oversizedResultChars,
    prunerBudget,
    engine: {
      thresholdRatio: 0.8,
      retainRatio: 0.16,
      headroomTokens: Math.floor(window / 16),
      compactionRetries: 1,
      maxTokens: Math.min(8192, defaultMaxTokens),
    },
    defaultMaxTokens,
  })
}

/** `value`, or `fallback` when it is undefined, when it is one of `allowed`. */
function oneOf<T extends string>(name: string, value: T | undefined, allowed: readonly T[], fallback: T): T {
  const chosen = value ?? fallback
  if (!allowed.includes(chosen))
    throw new TypeError(`workload ${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`)
  return chosen
}
