import { DEFAULT_PROVIDER_TOLERANCE_TOKENS } from '@warmfold/cache-ledger/prefix'
import type { WarmPlanner } from '../proxy-exchange.ts'
import type { ProxyStore } from './proxy-store.ts'

/**
 * What tokens cost, relative to one uncached input token (the shape of `warmfold`'s price
 * profiles, `--price`).
 */
export interface ProxyPrice {
  readonly name: string
  /** A prompt token read from the cache (Anthropic, OpenAI: 0.1). */
  readonly cacheRead: number
  /** A prompt token written to the cache (1 where writes are billed as plain input). */
  readonly cacheWrite: number
  readonly output: number
  /** Dollars per million uncached input tokens; null: costs are given in input-token units only. */
  readonly usdPerMillionInput: number | null
}

/** How the observer is set up (every field optional; defaults below). */
export interface ObserverOptions {
  /** The JSONL log to append one line per exchange to (created with mode 0600); none: no log. */
  readonly log?: string
  /**
   * A store to write instead of `log` (never both): each exchange's line without its body, and each
   * session's last conversation request (not with `noBodies`), which replicas sharing the store
   * recall to rewrite a summary request another replica's conversation request preceded.
   */
  readonly store?: ProxyStore
  /** Log a SHA-256 digest and the byte count of each body instead of the body. Default false. */
  readonly noBodies?: boolean
  /** The provider's cache TTL: a request idle longer than this is `expired`. Default 300,000 ms (5 minutes). */
  readonly cacheTtlMs?: number
  /** Sessions kept at most; the least recently active is dropped first. Default 1,000. */
  readonly maxSessions?: number
  /** A session idle longer than `cacheTtlMs` × this is dropped with what it remembers. Default 4. */
  readonly forgetAfterTtls?: number
  /** What tokens cost; without it costs are not computed (null). */
  readonly prices?: ProxyPrice
  /**
   * How far the provider's cached tokens may fall short of the predicted prefix before the cause is
   * `provider`. Default 1,024 (`DEFAULT_PROVIDER_TOLERANCE_TOKENS`; providers cache in blocks).
   */
  readonly providerToleranceTokens?: number
  /** Breaks, compactions and requests the live page keeps (the latest). Default 200. */
  readonly liveItems?: number
  /** The clock (ms since the epoch), for tests. Default `Date.now`. */
  readonly now?: () => number
  /**
   * A planner that only recognises summary requests the forward did not plan (warm summaries
   * off): consulted off the forward's path, its rewrite never sent, so compactions are counted in
   * every mode. Give it its own instance: a planner remembers the rewrites it planned.
   */
  readonly recognize?: WarmPlanner
}

/** The options that have no default. */
type Undefaulted = 'log' | 'prices' | 'recognize'

/** {@link ObserverOptions} (but `store`, which the observer takes as given) with every default applied. */
export type ResolvedObserverOptions = Required<Omit<ObserverOptions, 'store' | Undefaulted>> &
  Pick<ObserverOptions, Undefaulted>

/** The default cache TTL: 5 minutes (Anthropic's default cache, OpenAI's in-memory retention). */
export const DEFAULT_OBSERVER_CACHE_TTL_MS = 300_000
/** The default session bound. */
export const DEFAULT_MAX_SESSIONS = 1000

/** `value`, or a RangeError naming option `name`. */
function positive(name: string, value: number, integer: boolean): number {
  if (!(Number.isFinite(value) && value > 0 && (!integer || Number.isInteger(value))))
    throw new RangeError(
      `observer option ${name} must be a positive ${integer ? 'integer' : 'number'}, got ${String(value)}`,
    )
  return value
}

/**
 * `options` with the defaults applied.
 * @throws RangeError naming the option and the value when one is out of range.
 */
export function resolveObserverOptions(options: ObserverOptions = {}): ResolvedObserverOptions {
  const prices = options.prices
  if (prices)
    for (const field of ['cacheRead', 'cacheWrite', 'output'] as const)
      if (!(Number.isFinite(prices[field]) && prices[field] >= 0))
        throw new RangeError(`observer option prices.${field} must be a number ≥ 0, got ${String(prices[field])}`)
  if (options.log !== undefined && (typeof options.log !== 'string' || options.log === ''))
    throw new RangeError(`observer option log must be a file path, got ${JSON.stringify(options.log)}`)
  if (options.log !== undefined && options.store !== undefined)
    throw new RangeError(
      `observer options log and store are exclusive (log ${JSON.stringify(options.log)}, ` +
        `store ${options.store.replica})`,
    )
  const tolerance = options.providerToleranceTokens ?? DEFAULT_PROVIDER_TOLERANCE_TOKENS
  if (!(Number.isFinite(tolerance) && tolerance >= 0))
    throw new RangeError(`observer option providerToleranceTokens must be a number ≥ 0, got ${String(tolerance)}`)
  return {
    log: options.log,
    noBodies: options.noBodies ?? false,
    cacheTtlMs: positive('cacheTtlMs', options.cacheTtlMs ?? DEFAULT_OBSERVER_CACHE_TTL_MS, false),
    maxSessions: positive('maxSessions', options.maxSessions ?? DEFAULT_MAX_SESSIONS, true),
    forgetAfterTtls: positive('forgetAfterTtls', options.forgetAfterTtls ?? 4, false),
    prices,
    providerToleranceTokens: tolerance,
    liveItems: positive('liveItems', options.liveItems ?? 200, true),
    now: options.now ?? Date.now,
    recognize: options.recognize,
  }
}
