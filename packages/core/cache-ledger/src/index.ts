export type { CacheGuardData, CacheObservationData } from './cache-events.ts'
export { CACHE_EVENT_TYPES } from './cache-events.ts'
export { CacheGuardError } from './cache-guard-error.ts'
export { CacheLedger, CacheLedger as default } from './cache-ledger.ts'
export type { CacheTotals } from './cache-totals.ts'
export { cacheTotals } from './cache-totals.ts'
// The divergence and cause vocabulary of the events above; the model behind them is `./prefix`.
export type { CacheBreakCause, CacheDivergence } from './prefix/index.ts'
export { CACHE_BREAK_CAUSES } from './prefix/cache-divergence.ts'
