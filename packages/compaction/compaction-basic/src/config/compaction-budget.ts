import type { ResolvedPolicy } from './compaction-policy.ts'
import { POLICY_DEFAULTS } from './compaction-policy.ts'

/** Token budgets of one target. */
export interface CompactionBudget {
  readonly contextWindow: number
  /** Output tokens the conversation reserves (header maxTokens, else the model default, else 0). */
  readonly reservedOutputTokens: number
  /** Compact when the measured request reaches this. */
  readonly thresholdTokens: number
  /** Tokens kept as the uncompacted tail. */
  readonly retainTokens: number
}

/**
 * threshold = floor(min(window × thresholdRatio, window − headroom − reserved output)),
 * retain = retainTokens ?? floor(window × retainRatio).
 * @throws Error naming the keys when the threshold is not positive or retain ≥ threshold.
 */
export function resolveBudget(
  policy: ResolvedPolicy,
  contextWindow: number,
  reservedOutputTokens: number,
  target: string,
): CompactionBudget {
  if (!Number.isInteger(contextWindow) || contextWindow <= 0)
    throw new Error(
      `compaction for ${target}: the model's contextWindow must be a positive integer, got ${contextWindow}`,
    )
  const thresholdTokens = Math.floor(
    Math.min(contextWindow * policy.thresholdRatio, contextWindow - policy.headroomTokens - reservedOutputTokens),
  )
  if (thresholdTokens <= 0) {
    throw new Error(
      `compaction for ${target}: threshold is ${thresholdTokens} tokens (window ${contextWindow} − headroomTokens ` +
        `${policy.headroomTokens} − reserved output ${reservedOutputTokens}); lower headroomTokens or the ` +
        `conversation's maxTokens`,
    )
  }
  const retainTokens =
    policy.retainTokens ?? Math.floor(contextWindow * (policy.retainRatio ?? POLICY_DEFAULTS.retainRatio))
  if (retainTokens >= thresholdTokens) {
    throw new Error(
      `compaction for ${target}: retain (${retainTokens} tokens, from ` +
        `${policy.retainTokens === undefined ? 'retainRatio' : 'retainTokens'}) must be below the threshold ` +
        `(${thresholdTokens} tokens, from thresholdRatio/headroomTokens)`,
    )
  }
  return Object.freeze({ contextWindow, reservedOutputTokens, thresholdTokens, retainTokens })
}
