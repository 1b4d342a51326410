import type { ConfigParser } from '@warmfold/llm'
import {
  deepFreeze,
  integerSchema,
  millisecondsSchema,
  shareSchema,
  strictConfig,
  unknownKeyMessage,
} from '@warmfold/llm'
import Schema from 'schemastery'
import type { BackgroundFoldConfig } from './background-fold-config.ts'
import { backgroundFoldProblem, backgroundFoldSchema } from './background-fold-config.ts'
import type { ArtifactTrailConfig, FoldAuditConfig } from './fold-audit-config.ts'
import { artifactTrailSchema, foldAuditProblem, foldAuditSchema } from './fold-audit-config.ts'
import type { EngineClock } from '../engine-clock.ts'
import type { IdleCompactionConfig } from './idle-compaction-config.ts'
import type { KeepUserMessagesPolicy, ResolvedKeepUserMessages } from './keep-user-messages.ts'
import { keepUserMessagesProblem, keepUserMessagesSchema, resolveKeepUserMessages } from './keep-user-messages.ts'
import { engineClockProblem, idleCompactionProblem, idleCompactionSchema } from './idle-compaction-config.ts'
import type { ResolvedSummaryBudget, SummaryBudgetPolicy } from './summary-budget-policy.ts'
import {
  mergeSummaryBudget,
  resolveSummaryBudget,
  summaryBudgetProblem,
  summaryBudgetSchema,
} from './summary-budget-policy.ts'

/** Policy keys that `modelPolicies` may override per exact provider/model. */
export interface CompactionPolicy {
  /** Compact when the request reaches this share of the context window. Default 0.8. */
  thresholdRatio?: number
  /** Keep this share of the window as the uncompacted tail. Default 0.16. Exclusive with `retainTokens`. */
  retainRatio?: number
  /** Keep this many tokens as the uncompacted tail. Exclusive with `retainRatio`. */
  retainTokens?: number
  /**
   * Extra output reserve: threshold = min(window × thresholdRatio, window − headroom − reserved
   * output). Default 0.
   */
  headroomTokens?: number
  /** Output cap of the summary call. Default 8192. */
  maxTokens?: number
  /**
   * Share of the summary target's context window a summary call leaves unused: its prompt
   * estimate + `maxTokens` stay within `window − ceil(window × summaryMarginRatio)`. Absorbs a
   * provider tokenizer that counts more than the token meter's estimate. In [0, 1). Default 0.1.
   */
  summaryMarginRatio?: number
  /** Route summary calls here instead of the conversation's route (set both or neither). */
  summarizationProvider?: string
  summarizationModel?: string
  /** Extra compaction passes in one pressure call when one pass is not enough. Default 1. */
  compactionRetries?: number
  /**
   * Retries of one step granted after CONTEXT_WINDOW_EXCEEDED, each only after a recovery that
   * really shrank the surface (0 disables overflow recovery). Default 1.
   */
  maxOverflowRetries?: number
  /** Larger caps (and an optional lower effort) for a summary answer that spent its cap without a summary. */
  summaryBudget?: SummaryBudgetPolicy
  /**
   * Wall-clock milliseconds one summary call may take before it is abandoned (the compaction is
   * refused, nothing is committed): bounds a stream that never ends. Default 900000 (15 min,
   * above the slowest folds reported for hosted models); raise it for a slow local model; 0: no limit.
   */
  summaryDeadlineMs?: number
  /**
   * Carry user-authored messages of a folded region (not tool results, checkpoints or plugin
   * messages) verbatim after the checkpoint: the user's task (the first user-authored message on
   * the surface), then the newest ones, while their token prices fit `maxTokens` together.
   * `false`: only pinned messages are carried. Default: a budget of 5 % of the conversation's
   * window, at most 20,000 tokens (see the README's "What survives a fold").
   */
  keepUserMessages?: KeepUserMessagesPolicy
}

/** A per-model override: exact provider and model, plus any policy keys. */
export interface ModelPolicy extends CompactionPolicy {
  provider: string
  model: string
}

/** `BasicCompactionEngine` config. */
export interface BasicCompactionConfig extends CompactionPolicy {
  /** Exact provider/model overrides; later keys win over the base policy. */
  modelPolicies?: ModelPolicy[]
  /**
   * Let the `CompactionEngine` base wire the automatic triggers (pressure before every step,
   * recovery after `CONTEXT_WINDOW_EXCEEDED`). `false` leaves compaction to explicit calls. Default true.
   */
  auto?: boolean
  /** Fold while the provider's cache is still warm when the agent goes idle under pressure (see the README). */
  idle?: IdleCompactionConfig
  /** Summarize beside the conversation from a soft threshold on (see the README). */
  background?: BackgroundFoldConfig
  /**
   * The model-free audit of every committed fold, logged as `compaction/audit` (see the README's "What
   * a fold keeps").
   */
  audit?: FoldAuditConfig
  /** The artifact trail code appends to every checkpoint text (see the README's "What a fold keeps"). */
  artifactTrail?: ArtifactTrailConfig
  /**
   * The clock the engine keeps time on (when folds start and are ready, how long the
   * conversation waits, when idle folds are due); default real time. A simulator passes its
   * virtual clock. `idle.clock` is the former place of this key and is still read.
   */
  clock?: EngineClock
}

/** The policy in force for one target, with defaults applied. */
export interface ResolvedPolicy {
  readonly thresholdRatio: number
  readonly retainRatio?: number
  readonly retainTokens?: number
  readonly headroomTokens: number
  readonly maxTokens: number
  readonly summaryMarginRatio: number
  readonly summarizationProvider?: string
  readonly summarizationModel?: string
  readonly compactionRetries: number
  readonly maxOverflowRetries: number
  readonly summaryBudget: ResolvedSummaryBudget
  /** Absent when `keepUserMessages` is `false`. */
  readonly keepUserMessages?: ResolvedKeepUserMessages
  /** 0: no limit. */
  readonly summaryDeadlineMs: number
}

export const POLICY_DEFAULTS = Object.freeze({
  thresholdRatio: 0.8,
  retainRatio: 0.16,
  headroomTokens: 0,
  maxTokens: 8192,
  summaryMarginRatio: 0.1,
  compactionRetries: 1,
  maxOverflowRetries: 1,
  summaryDeadlineMs: 900_000,
})

function policyShape() {
  return {
    thresholdRatio: shareSchema().description('Compact at this share of the context window (0..1].'),
    retainRatio: shareSchema().description('Uncompacted tail as a share of the window; exclusive with retainTokens.'),
    retainTokens: integerSchema().description('Uncompacted tail in tokens; exclusive with retainRatio.'),
    headroomTokens: integerSchema().description('Extra output reserve below the window.'),
    maxTokens: integerSchema(1).description('Summary output cap.'),
    summaryMarginRatio: shareSchema().description(
      'Share of the summary window left unused, for tokenizer differences [0, 1).',
    ),
    summarizationProvider: Schema.string().description('Summary route provider (with summarizationModel).'),
    summarizationModel: Schema.string().description('Summary route model (with summarizationProvider).'),
    compactionRetries: integerSchema().description('Extra passes per pressure call.'),
    maxOverflowRetries: integerSchema().description('Retries after CONTEXT_WINDOW_EXCEEDED.'),
    summaryBudget: summaryBudgetSchema(),
    summaryDeadlineMs: millisecondsSchema().description('Wall-clock ms one summary call may take (0: no limit).'),
    keepUserMessages: keepUserMessagesSchema(),
  }
}

const POLICY_KEYS = Object.keys(policyShape())

/** Validates one policy (base or override) for contradictions; `where` names it in errors. */
function checkPolicy(policy: CompactionPolicy, where: string): void {
  const fail = (message: string) => {
    throw new TypeError(`BasicCompactionEngine config: ${where}${message}`)
  }
  if (policy.thresholdRatio !== undefined && policy.thresholdRatio <= 0)
    fail(`thresholdRatio must be in (0, 1], got ${policy.thresholdRatio}`)
  if (policy.retainRatio !== undefined && policy.retainTokens !== undefined)
    fail('retainRatio and retainTokens are exclusive; set one of them')
  if (policy.retainRatio !== undefined && (policy.retainRatio <= 0 || policy.retainRatio >= 1))
    fail(`retainRatio must be in (0, 1), got ${policy.retainRatio}`)
  if (policy.summaryMarginRatio !== undefined && policy.summaryMarginRatio >= 1)
    fail(`summaryMarginRatio must be in [0, 1), got ${policy.summaryMarginRatio}`)
  if ((policy.summarizationProvider === undefined) !== (policy.summarizationModel === undefined)) {
    fail(
      'summarizationProvider and summarizationModel must be set together (got ' +
        `${policy.summarizationProvider === undefined ? 'only summarizationModel' : 'only summarizationProvider'})`,
    )
  }
  if (policy.summarizationProvider === '' || policy.summarizationModel === '')
    fail('summarizationProvider and summarizationModel must not be empty')
  const problem = summaryBudgetProblem(policy.summaryBudget) ?? keepUserMessagesProblem(policy.keepUserMessages)
  if (problem) fail(problem)
}

const baseSchema = Schema.object({
  ...policyShape(),
  modelPolicies: Schema.array(
    Schema.object({ provider: Schema.string().required(), model: Schema.string().required(), ...policyShape() }),
  ).default([]),
  auto: Schema.boolean().default(true).description('Install the automatic compaction listeners.'),
  idle: idleCompactionSchema(),
  background: backgroundFoldSchema(),
  audit: foldAuditSchema(),
  artifactTrail: artifactTrailSchema(),
  clock: Schema.any().description('{ now(), setTimeout(callback, ms) → cancel, wait?(work, ms) }; default real time.'),
})

const parseBase = strictConfig<BasicCompactionConfig>(
  'BasicCompactionEngine',
  baseSchema as unknown as Schema<BasicCompactionConfig>,
)

/** The engine config as its parser returns it: defaults of `auto` and `modelPolicies` filled, frozen. */
export type ParsedCompactionConfig = Required<Pick<BasicCompactionConfig, 'auto' | 'modelPolicies'>> &
  BasicCompactionConfig

/** Parses and validates the engine config; every error names the key (and the override). */
export const parseCompactionConfig: ConfigParser<ParsedCompactionConfig, BasicCompactionConfig> = Object.assign(
  (input?: unknown) => {
    const config = parseBase(input) as BasicCompactionConfig
    checkPolicy(config, '')
    const problem =
      idleCompactionProblem(config.idle) ??
      backgroundFoldProblem(config.background) ??
      foldAuditProblem(config.audit, config.artifactTrail) ??
      engineClockProblem(config.clock, 'clock')
    if (problem) throw new TypeError(`BasicCompactionEngine config: ${problem}`)
    const seen = new Set<string>()
    for (const [index, override] of (config.modelPolicies ?? []).entries()) {
      const where = `modelPolicies[${index}] (${override.provider}/${override.model}): `
      for (const key of Object.keys(override)) {
        if (key !== 'provider' && key !== 'model' && !POLICY_KEYS.includes(key)) {
          throw new TypeError(
            `BasicCompactionEngine config: ${where}${unknownKeyMessage(key, ['provider', 'model', ...POLICY_KEYS])}`,
          )
        }
      }
      const key = `${override.provider}\u0000${override.model}`
      if (seen.has(key))
        throw new TypeError(`BasicCompactionEngine config: ${where}duplicate override for the same provider and model`)
      seen.add(key)
      checkPolicy(merge(config, override), where)
    }
    // Clocks are the host's objects (a simulator's clock mutates itself): frozen around, not through.
    const { clock: idleClock, ...idleRest } = config.idle ?? {}
    const idle = config.idle && Object.freeze({ ...deepFreeze(idleRest), ...(idleClock ? { clock: idleClock } : {}) })
    const { clock, ...rest } = config
    return Object.freeze({
      ...deepFreeze({
        ...rest,
        ...(idle ? { idle } : {}),
        auto: config.auto ?? true,
        modelPolicies: config.modelPolicies ?? [],
      }),
      ...(clock ? { clock } : {}),
    })
  },
  { schema: baseSchema as unknown as Schema },
)

function merge(base: CompactionPolicy, override: CompactionPolicy): CompactionPolicy {
  const merged: CompactionPolicy = { ...pick(base), ...pick(override) }
  // An override that names a retention form replaces the base's, so the two never collide.
  if (override.retainTokens !== undefined) delete merged.retainRatio
  if (override.retainRatio !== undefined) delete merged.retainTokens
  const summaryBudget = mergeSummaryBudget(base.summaryBudget, override.summaryBudget)
  if (summaryBudget) merged.summaryBudget = summaryBudget
  return merged
}

function pick(policy: CompactionPolicy): CompactionPolicy {
  const values = policy as Record<string, unknown>
  return Object.fromEntries(POLICY_KEYS.filter((key) => values[key] !== undefined).map((key) => [key, values[key]]))
}

/** The policy for `provider`/`model`: the base merged with its exact override, defaults applied. */
export function resolvePolicy(config: BasicCompactionConfig, provider: string, model: string): ResolvedPolicy {
  const override = config.modelPolicies?.find((policy) => policy.provider === provider && policy.model === model)
  const merged = override ? merge(config, override) : pick(config)
  const keepUserMessages = resolveKeepUserMessages(merged.keepUserMessages)
  return Object.freeze({
    thresholdRatio: merged.thresholdRatio ?? POLICY_DEFAULTS.thresholdRatio,
    retainRatio: merged.retainTokens === undefined ? (merged.retainRatio ?? POLICY_DEFAULTS.retainRatio) : undefined,
    retainTokens: merged.retainTokens,
    headroomTokens: merged.headroomTokens ?? POLICY_DEFAULTS.headroomTokens,
    maxTokens: merged.maxTokens ?? POLICY_DEFAULTS.maxTokens,
    summaryMarginRatio: merged.summaryMarginRatio ?? POLICY_DEFAULTS.summaryMarginRatio,
    summarizationProvider: merged.summarizationProvider,
    summarizationModel: merged.summarizationModel,
    compactionRetries: merged.compactionRetries ?? POLICY_DEFAULTS.compactionRetries,
    maxOverflowRetries: merged.maxOverflowRetries ?? POLICY_DEFAULTS.maxOverflowRetries,
    summaryBudget: resolveSummaryBudget(merged.summaryBudget),
    ...(keepUserMessages ? { keepUserMessages } : {}),
    summaryDeadlineMs: merged.summaryDeadlineMs ?? POLICY_DEFAULTS.summaryDeadlineMs,
  })
}
