import type { AnySessionEvent } from '@warmfold/session'
import type { CacheGuardData, CacheObservationData } from './cache-events.ts'
import type { CacheBreakCause } from './prefix/index.ts'

/** What a session's cache events add up to. */
export interface CacheTotals {
  /** Observed requests: conversation, summary calls and retries alike. */
  readonly requests: number
  /** Requests per purpose. */
  readonly purposes: Readonly<Record<string, number>>
  /** Sums of the provider's buckets over the requests that reported them. */
  readonly uncached: number
  readonly cached: number
  readonly written: number
  readonly output: number
  /** Requests whose provider reported none of the prompt buckets. */
  readonly unreported: number
  /** Requests per cause, `none` left out. */
  readonly breaks: Readonly<Partial<Record<CacheBreakCause, number>>>
  /** `cache/guard` events with `action: 'warn'` (summary calls sent although not warm replays). */
  readonly guardWarnings: number
  /** `cache/guard` events with `action: 'refuse'` (summary calls never sent). */
  readonly guardRefusals: number
}

/** Adds up the `cache/observation` and `cache/guard` events of a session log. */
export function cacheTotals(events: readonly AnySessionEvent[]): CacheTotals {
  let requests = 0
  let uncached = 0
  let cached = 0
  let written = 0
  let output = 0
  let unreported = 0
  let guardWarnings = 0
  let guardRefusals = 0
  const purposes: Record<string, number> = {}
  const breaks: Partial<Record<CacheBreakCause, number>> = {}
  for (const event of events) {
    if (event.type === 'cache/guard') {
      if ((event.data as CacheGuardData).action === 'refuse') guardRefusals++
      else guardWarnings++
      continue
    }
    if (event.type !== 'cache/observation') continue
    const data = event.data as CacheObservationData
    requests++
    purposes[data.purpose] = (purposes[data.purpose] ?? 0) + 1
    if (data.uncached === undefined && data.cached === undefined && data.written === undefined) unreported++
    uncached += data.uncached ?? 0
    cached += data.cached ?? 0
    written += data.written ?? 0
    output += data.output ?? 0
    if (data.cause !== 'none') breaks[data.cause] = (breaks[data.cause] ?? 0) + 1
  }
  return { requests, purposes, uncached, cached, written, output, unreported, breaks, guardWarnings, guardRefusals }
}
