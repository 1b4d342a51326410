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
export { comparableGeminiContents } from './warm/gemini-call-ids.ts'
export type { AgentMatch, KnownAgent, SummaryShape } from './warm/known-agents.ts'
export { KNOWN_AGENTS, matchKnownAgent } from './warm/known-agents.ts'
export { TEXT_ONLY_GUARD } from './warm/summary-instruction.ts'
export type { WarmSummaryPlannerOptions } from './warm/warm-summary-planner.ts'
export { WarmSummaryPlanner } from './warm/warm-summary-planner.ts'
export type { AnswerReading, DecidedContent } from './forward/answer-reader.ts'
export { AnswerReader } from './forward/answer-reader.ts'
export { forwardingPlanner, nullObserver } from './forward/null-parts.ts'
export type { ProxyAddress } from './forward/proxy-server.ts'
export { routeOf } from './forward/route-of.ts'
export { isLoopbackHost, WarmfoldProxy } from './warmfold-proxy.ts'
export { WarmfoldProxy as default } from './warmfold-proxy.ts'
export type { ComparedRequest, ObservedCause, PromptAnalysis } from './observe/analyze-request.ts'
export { analyzePrompt, PROVIDER_SIDE } from './observe/analyze-request.ts'
export type { ExchangeRecord, RewriteRecord } from './observe/exchange-record.ts'
export { PROXY_LOG_FORMAT } from './observe/exchange-record.ts'
export type { LiveBreak, LiveCompaction, LiveSession, LiveSnapshot } from './observe/live-state.ts'
export type { ObserverOptions, ProxyPrice } from './observe/observer-options.ts'
export { DEFAULT_MAX_SESSIONS, DEFAULT_OBSERVER_CACHE_TTL_MS } from './observe/observer-options.ts'
export type { ObserverMemory } from './observe/proxy-observer.ts'
export { ProxyObserver } from './observe/proxy-observer.ts'
export type { ProxyStore, StoredConversation } from './observe/proxy-store.ts'
export { renderLivePage } from './observe/render-live-page.ts'
export { sessionKeyOf } from './observe/session-key.ts'
