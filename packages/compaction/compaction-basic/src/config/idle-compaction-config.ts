import { millisecondsSchema, shareSchema, unknownKeyMessage } from '@warmfold/llm'
import Schema from 'schemastery'
import type { EngineClock } from '../engine-clock.ts'
import { REAL_TIME_CLOCK } from '../engine-clock.ts'

/** Engine config key `idle`: fold while the provider's cache is still warm, before its TTL runs out. */
export interface IdleCompactionConfig {
  /** Schedule idle compactions. Default true. */
  enabled?: boolean
  /**
   * Fold only when the request is at least this share of the compaction threshold when the
   * agent goes idle (and when the timer fires). In [0, 1]. Default 0.6.
   */
  minPressure?: number
  /** Fold this long before the cache TTL runs out, counted from the last request. Default 30000 (30 s). */
  marginMs?: number
  /** The clock to schedule on (default real time). A simulator with a virtual clock passes its own. */
  clock?: EngineClock
}

/** `idle` with defaults applied. */
export type ResolvedIdleCompaction = Readonly<Required<IdleCompactionConfig>>

/**
 * The `idle` schema (typed by hand: an inferred schemastery type names a namespace older schemastery
 * versions do not declare).
 */
export function idleCompactionSchema(): Schema<IdleCompactionConfig> {
  return Schema.object({
    enabled: Schema.boolean().description('Fold while the cache is warm when the agent goes idle under pressure.'),
    minPressure: shareSchema().description('Share of the compaction threshold the request must reach (0..1).'),
    marginMs: millisecondsSchema().description('Fold this many ms before the cache TTL runs out.'),
    clock: Schema.any().description('{ now(), setTimeout(callback, ms) → cancel }; default real time.'),
  }).description('Idle compaction before the provider cache expires.')
}

/** What is wrong with `idle`, or undefined. */
export function idleCompactionProblem(idle: IdleCompactionConfig | undefined): string | undefined {
  if (idle === undefined) return undefined
  const known = ['enabled', 'minPressure', 'marginMs', 'clock']
  for (const key of Object.keys(idle)) if (!known.includes(key)) return `idle: ${unknownKeyMessage(key, known)}`
  return engineClockProblem(idle.clock, 'idle.clock')
}

/** What is wrong with a clock given at config key `key`, or undefined. */
export function engineClockProblem(value: unknown, key: string): string | undefined {
  if (value === undefined) return undefined
  const clock = value as Partial<EngineClock> | null
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function')
    return `${key} must have now() and setTimeout(callback, ms) functions`
  if (clock.wait !== undefined && typeof clock.wait !== 'function') return `${key}.wait must be a function when given`
  return undefined
}

export function resolveIdleCompaction(idle: IdleCompactionConfig | undefined): ResolvedIdleCompaction {
  return Object.freeze({
    enabled: idle?.enabled ?? true,
    minPressure: idle?.minPressure ?? 0.6,
    marginMs: idle?.marginMs ?? 30_000,
    clock: idle?.clock ?? REAL_TIME_CLOCK,
  })
}
