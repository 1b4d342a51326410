export { assertNoSilentRewrite, hitRatio, silentRewrites, uncachedTokens } from './cache-assertions.ts'
export type { CacheObservation, CacheTotals, Divergence, LoggedRewrite } from './cache-observation.ts'
export { totalsOf } from './cache-observation.ts'
export { CacheProbeError } from './cache-probe-error.ts'
export type { CacheProbeOptions, ProbeConnection, ProbeConnectOptions, ProbeConnector } from './cache-probe.ts'
export { CacheProbe, chatCompletions, DEFAULT_PROBE_TIMEOUT_MS } from './cache-probe.ts'
export type { CacheProfile } from './cache-profile.ts'
export { parseCacheProfile, PROFILE_SYNTAX, tokensOf } from './cache-profile.ts'
export type { PlantedClass } from './coding-workload.ts'
export type { CostFloor } from './cost-floor.ts'
export { costFloor } from './cost-floor.ts'
export type {
  AuditDroppedItem,
  AuditTrail,
  CompactionAuditData,
  FoldAuditRecord,
  PlantedSurvival,
} from './fold-audit-record.ts'
export { foldAuditRecords, PLANTED_CLASSES, summaryCallAudits } from './fold-audit-record.ts'
export { foldStalls } from './fold-stalls.ts'
export type { LatencyProfile, LatencyProfileName } from './latency-profile.ts'
export {
  builtinLatencyProfile,
  DEFAULT_LATENCY_PROFILE,
  LATENCY_KEYS,
  LATENCY_LIMITS,
  LATENCY_PROFILES,
  LATENCY_SYNTAX,
  latencyProfileFromJson,
} from './latency-profile.ts'
export type { WarmfoldHostOptions } from './mount-warmfold-host.ts'
export { mountWarmfoldHost } from './mount-warmfold-host.ts'
export { PrefixCacheService } from './prefix-cache-service.ts'
export { PrefixCache } from './prefix-cache.ts'
export type { PriceProfile, PriceProfileName } from './price-profile.ts'
export { builtinPriceProfile, PRICE_PROFILES, PRICE_SYNTAX, priceProfileFromJson } from './price-profile.ts'
export type { PricedRequest, PricedRun } from './price-run.ts'
export { priceRun } from './price-run.ts'
export { LegacyCompactionEngine } from './reference-strategies.ts'
export { regionCoverage } from './region-coverage.ts'
export type { Cost } from './request-cost.ts'
export { costUsd, requestCost, sumCosts } from './request-cost.ts'
export type { LatencyTokens, RequestLatency } from './request-latency.ts'
export { requestLatency } from './request-latency.ts'
export type { ProbedWorkloadRun } from './run-probed-workload.ts'
export { runProbedWorkload } from './run-probed-workload.ts'
export type { RunWorkloadHooks, WorkloadRun } from './run-workload.ts'
export { runWorkload } from './run-workload.ts'
export type { FoldStall, StallSummary } from './stall-summary.ts'
export { stallSummary } from './stall-summary.ts'
export type { WorkloadKind, WorkloadOptions, WorkloadPruner, WorkloadStrategy } from './workload-options.ts'
export { DEFAULT_STRATEGIES, EFFORTS, PRUNERS, STRATEGIES, WORKLOAD_KINDS } from './workload-options.ts'
export { fillerText } from './workload-text.ts'
export { PrefixCacheService as default } from './prefix-cache-service.ts'
