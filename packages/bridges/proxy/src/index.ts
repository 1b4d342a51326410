/**
 * `@warmfold/proxy`: `warmfold proxy`, an HTTP proxy at an agent's base URL that forwards every
 * request byte for byte, explains every prefix-cache break live, and (opt-in) sends foreign agents'
 * summary requests in the warm shape, fail-open.
 */
export type {
  AnswerFacts,
  Exchange,
  ExchangeObserver,
  InboundRequest,
  ProviderUsage,
  RememberedRequest,
  RequestMemory,
  RouteKind,
  RouteMatch,
  SummaryRecognition,
  WarmMode,
  WarmPlan,
  WarmPlanner,
} from './proxy-exchange.ts'
export { REDACTED, redactHeaders, redactUrl } from './redact-headers.ts'
export type { ComparedRequest, ObservedCause, PromptAnalysis } from './observe/analyze-request.ts'
export { analyzePrompt, PROVIDER_SIDE } from './observe/analyze-request.ts'
export type { ExchangeRecord, RewriteRecord } from './observe/exchange-record.ts'
export { PROXY_LOG_FORMAT } from './observe/exchange-record.ts'
export type { LiveBreak, LiveCompaction, LiveSession, LiveSnapshot } from './observe/live-state.ts'
export type { ObserverOptions, ProxyPrice } from './observe/observer-options.ts'
export { DEFAULT_MAX_SESSIONS, DEFAULT_OBSERVER_CACHE_TTL_MS } from './observe/observer-options.ts'
export type { ObserverMemory } from './observe/proxy-observer.ts'
export { ProxyObserver } from './observe/proxy-observer.ts'
export { renderLivePage } from './observe/render-live-page.ts'
export { sessionKeyOf } from './observe/session-key.ts'
