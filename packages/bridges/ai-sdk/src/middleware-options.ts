import type {
  ArtifactTrailConfig,
  BasicCompactionConfig,
  CompactionPolicy,
  FoldAuditConfig,
} from '@warmfold/compaction-basic'
import type { ResolvedFoldAudit } from '@warmfold/compaction-basic/engine-parts'
import {
  backgroundFoldProblem,
  foldAuditProblem,
  parseCompactionConfig,
  resolveBackgroundFold,
  resolveFoldAudit,
} from '@warmfold/compaction-basic/engine-parts'
import { DEFAULT_PROVIDER_TOLERANCE_TOKENS } from '@warmfold/cache-ledger/prefix'
import { integerRange, numberProblem } from '@warmfold/llm'
import type { CacheReport, FoldReport } from './reports.ts'
import type { FoldStore } from './fold-store.ts'
import { memoryFoldStore } from './fold-store.ts'

/** The policy keys accepted (the others of `BasicCompactionEngine` belong to its session model). */
export const MIDDLEWARE_POLICY_KEYS = [
  'thresholdRatio',
  'retainRatio',
  'retainTokens',
  'headroomTokens',
  'maxTokens',
  'summaryMarginRatio',
  'summaryBudget',
  'summaryDeadlineMs',
] as const

/** The engine's policy keys the middleware takes, under `BasicCompactionEngine`'s names and meanings. */
export type MiddlewarePolicy = Pick<CompactionPolicy, (typeof MIDDLEWARE_POLICY_KEYS)[number]>

/** `warmfoldMiddleware` options. */
export interface WarmfoldMiddlewareOptions extends MiddlewarePolicy {
  /** The model's context window in tokens; required unless the model id is in `KNOWN_CONTEXT_WINDOWS`. */
  contextWindow?: number
  /** Where fold records live. Default: in memory, for the life of the middleware object. */
  store?: FoldStore
  /** Called after every fold attempt, committed or refused. */
  onFold?: (report: FoldReport) => void
  /**
   * Background folds (the engine's `background` key, off unless given): from
   * `startRatio × threshold` on, the summary call of the previous request runs beside the
   * conversation, and its checkpoint applies to the first later call that still starts with the
   * folded history. At the threshold a fold in flight is waited for up to `maxWaitMs`, then the
   * call folds itself. `startRatio` must be a number here (`'adaptive'` needs the engine's
   * session pace) and `prewarm` is not supported.
   */
  background?: { enabled?: boolean; startRatio?: number; maxWaitMs?: number }
  /**
   * Called after every request the middleware sent (conversation and summary calls) with what
   * the provider reported.
   */
  onCacheReport?: (report: CacheReport) => void
  /** The engine's `audit` key: the model-free audit of every committed fold (`FoldReport.audit`). Default on. */
  audit?: FoldAuditConfig
  /** The engine's `artifactTrail` key: the section code writes into every checkpoint. Default on. */
  artifactTrail?: ArtifactTrailConfig
  /**
   * After a fold whose summary call failed (a provider error that may pass, a broken stream,
   * `summaryDeadlineMs`), the conversation's next `backOffCalls` calls are sent without trying to
   * fold; the one after tries again. A fold refused for its content (no usable summary, nothing
   * foldable) backs off until the next user message instead. A new user message lifts both.
   * A non-negative integer; default 2.
   */
  backOffCalls?: number
  /**
   * How far the summary call's cache read may fall short of the previous request it replays
   * (and by more than 5 %) before the fold is reported cold with cause `provider`: the cache
   * ledger's `providerToleranceTokens` rule. A non-negative integer (tokens); default 1024.
   */
  providerToleranceTokens?: number
}

const OWN_KEYS = [
  'contextWindow',
  'store',
  'onFold',
  'onCacheReport',
  'background',
  'audit',
  'artifactTrail',
  'backOffCalls',
  'providerToleranceTokens',
] as const

/** Default of `backOffCalls`: a failed summary call is tried again two calls later. */
export const DEFAULT_BACK_OFF_CALLS = 2

/**
 * Context windows (tokens) of models a host need not configure, by the model id the provider
 * reports: the models warmfold's adapter documentation configures (`claude-sonnet-4-6`,
 * `gpt-5.2`). Any other model needs `contextWindow`, which also overrides this table.
 */
export const KNOWN_CONTEXT_WINDOWS: Readonly<Record<string, number>> = Object.freeze({
  'claude-sonnet-4-6': 200_000,
  'gpt-5.2': 400_000,
})

/** Options checked, the policy in the engine's config shape. */
export interface ParsedMiddlewareOptions {
  readonly contextWindow?: number
  readonly policy: BasicCompactionConfig
  /** The option, else a store in memory for the life of the middleware. */
  readonly store: FoldStore
  /** The audit and the artifact trail, unless both are disabled. */
  readonly foldAudit?: ResolvedFoldAudit
  readonly onFold?: (report: FoldReport) => void
  readonly onCacheReport?: (report: CacheReport) => void
  /** Background folds when enabled, with defaults applied. */
  readonly background?: { readonly startRatio: number; readonly maxWaitMs: number }
  readonly backOffCalls: number
  readonly providerToleranceTokens: number
}

/** The range of `contextWindow`, in tokens. */
const TOKENS = integerRange(1)

function fail(message: string): never {
  throw new TypeError(`warmfoldMiddleware options: ${message}`)
}

/**
 * Checks the options: policy keys through the engine's own parser (the same errors, the same
 * defaults), the rest here. `summaryBudget.fallbackEffort` is refused: an AI SDK call carries its
 * reasoning effort in provider options the middleware cannot lower generically.
 * @throws TypeError naming the key and the value.
 */
export function parseMiddlewareOptions(options: WarmfoldMiddlewareOptions | undefined): ParsedMiddlewareOptions {
  if (options === undefined)
    return { policy: {}, store: memoryFoldStore(), foldAudit: resolveFoldAudit({}, {}), ...COUNTS }
  if (typeof options !== 'object' || options === null) fail(`expected an object, got ${JSON.stringify(options)}`)
  const policy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(options)) {
    if ((MIDDLEWARE_POLICY_KEYS as readonly string[]).includes(key)) policy[key] = value
    else if (!(OWN_KEYS as readonly string[]).includes(key))
      fail(`unknown key ${JSON.stringify(key)}; expected one of ${[...OWN_KEYS, ...MIDDLEWARE_POLICY_KEYS].join(', ')}`)
  }
  const { contextWindow, store, onFold, onCacheReport } = options
  const contextProblem = contextWindow === undefined ? undefined : numberProblem('contextWindow', contextWindow, TOKENS)
  if (contextProblem) fail(contextProblem)
  if (store !== undefined && (typeof store?.load !== 'function' || typeof store?.append !== 'function'))
    fail('store must have load() and append(record)')
  if (onFold !== undefined && typeof onFold !== 'function') fail(`onFold must be a function, got ${typeof onFold}`)
  if (onCacheReport !== undefined && typeof onCacheReport !== 'function')
    fail(`onCacheReport must be a function, got ${typeof onCacheReport}`)
  for (const key of ['backOffCalls', 'providerToleranceTokens'] as const) {
    const problem = options[key] === undefined ? undefined : numberProblem(key, options[key], integerRange())
    if (problem) fail(problem)
  }
  if (options.summaryBudget?.fallbackEffort !== undefined)
    fail(
      'summaryBudget.fallbackEffort is not supported: an AI SDK call sets its reasoning effort in provider ' +
        'options, which the middleware never changes',
    )
  const auditProblem = foldAuditProblem(options.audit, options.artifactTrail)
  if (auditProblem) fail(auditProblem)
  const foldAudit = resolveFoldAudit(options.audit, options.artifactTrail)
  let background: ParsedMiddlewareOptions['background']
  if (options.background !== undefined) {
    const given = options.background as Record<string, unknown>
    if ('prewarm' in given)
      fail("background.prewarm is not supported: the middleware sends no request of its own between the host's calls")
    if (given.startRatio === 'adaptive')
      fail("background.startRatio 'adaptive' is not supported: give a number in (0, 1)")
    const problem = backgroundFoldProblem(options.background)
    if (problem) fail(problem)
    const resolved = resolveBackgroundFold({ startRatio: 0.8, ...options.background })
    if (resolved.enabled) background = { startRatio: resolved.startRatio as number, maxWaitMs: resolved.maxWaitMs }
  }
  let parsed: BasicCompactionConfig
  try {
    parsed = parseCompactionConfig(policy)
  } catch (error) {
    return fail((error as Error).message.replace(/^BasicCompactionEngine config: /, ''))
  }
  return {
    ...(contextWindow === undefined ? {} : { contextWindow }),
    policy: parsed,
    store: store ?? memoryFoldStore(),
    ...(foldAudit.audit.enabled || foldAudit.trail.enabled ? { foldAudit } : {}),
    ...(onFold ? { onFold } : {}),
    ...(onCacheReport ? { onCacheReport } : {}),
    ...(background ? { background } : {}),
    backOffCalls: options.backOffCalls ?? COUNTS.backOffCalls,
    providerToleranceTokens: options.providerToleranceTokens ?? COUNTS.providerToleranceTokens,
  }
}

const COUNTS = { backOffCalls: DEFAULT_BACK_OFF_CALLS, providerToleranceTokens: DEFAULT_PROVIDER_TOLERANCE_TOKENS }

/**
 * The context window for `modelId`: the option, else the table.
 * @throws Error naming the model when neither gives one.
 */
export function contextWindowFor(options: ParsedMiddlewareOptions, provider: string, modelId: string): number {
  const window = options.contextWindow ?? KNOWN_CONTEXT_WINDOWS[modelId]
  if (window === undefined)
    throw new Error(
      `warmfoldMiddleware: no context window for model ${JSON.stringify(modelId)} ` +
        `(provider ${JSON.stringify(provider)}); set options.contextWindow`,
    )
  return window
}
