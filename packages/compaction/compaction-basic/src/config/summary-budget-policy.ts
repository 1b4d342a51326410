import { integerSchema, MAX_CONFIG_INTEGER, unknownKeyMessage } from '@warmfold/llm'
import Schema from 'schemastery'

/**
 * What a summary call may do when its answer spent the output cap without a summary (policy key
 * `summaryBudget`). Larger caps come first because they keep the cached prefix; a lower effort
 * is a cold call and must be allowed explicitly.
 */
export interface SummaryBudgetPolicy {
  /** Calls with a larger `maxTokens` on the same prompt after the first. Default 2. */
  retries?: number
  /**
   * Each larger cap is the previous one × `growth` (rounded up), at most what the window leaves.
   * Default 2; above 1.
   */
  growth?: number
  /**
   * One last call at this reasoning effort after the larger caps, sent as a deliberate cache
   * break (the effort shapes the rendered prompt). Unset (the default): refuse instead.
   */
  fallbackEffort?: string
}

/** `summaryBudget` with defaults applied. */
export type ResolvedSummaryBudget = Readonly<
  Required<Pick<SummaryBudgetPolicy, 'retries' | 'growth'>> & Pick<SummaryBudgetPolicy, 'fallbackEffort'>
>

const KEYS = ['retries', 'growth', 'fallbackEffort'] as const

/**
 * The `summaryBudget` schema (typed by hand: an inferred schemastery type names a namespace older
 * schemastery versions do not declare).
 */
export function summaryBudgetSchema(): Schema<SummaryBudgetPolicy> {
  return Schema.object({
    retries: integerSchema().description(
      'Calls with a larger maxTokens on the same prompt after a reasoning-only answer.',
    ),
    growth: Schema.number().max(MAX_CONFIG_INTEGER).description('Factor of each larger maxTokens (> 1).'),
    fallbackEffort: Schema.string().description('A last call at this lower effort (a cache break); unset: refuse.'),
  }).description('What a summary call does when its answer spent the output cap without a summary.')
}

/**
 * Checks `summaryBudget` for values its schema cannot express.
 * @returns the error text, naming the key, or `undefined` when it is valid.
 */
export function summaryBudgetProblem(budget: SummaryBudgetPolicy | undefined): string | undefined {
  if (budget === undefined) return undefined
  for (const key of Object.keys(budget)) {
    if (!(KEYS as readonly string[]).includes(key)) return `summaryBudget: ${unknownKeyMessage(key, KEYS)}`
  }
  // A growth of 1 or less would send the same cap again: a paid call that cannot end differently.
  if (budget.growth !== undefined && !(budget.growth > 1 && Number.isFinite(budget.growth)))
    return `summaryBudget.growth must be a finite number above 1, got ${budget.growth}`
  if (budget.fallbackEffort === '') return 'summaryBudget.fallbackEffort must not be empty'
  return undefined
}

/** `override`'s keys over `base`'s, key by key (an override may set only `fallbackEffort`). */
export function mergeSummaryBudget(
  base: SummaryBudgetPolicy | undefined,
  override: SummaryBudgetPolicy | undefined,
): SummaryBudgetPolicy | undefined {
  if (base === undefined || override === undefined) return override ?? base
  return { ...base, ...Object.fromEntries(Object.entries(override).filter(([, value]) => value !== undefined)) }
}

export function resolveSummaryBudget(budget: SummaryBudgetPolicy | undefined): ResolvedSummaryBudget {
  return Object.freeze({
    retries: budget?.retries ?? 2,
    growth: budget?.growth ?? 2,
    ...(budget?.fallbackEffort === undefined ? {} : { fallbackEffort: budget.fallbackEffort }),
  })
}
