import type { PruneDecisionData } from '@warmfold/compaction'
import type { ModelInfo } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'
import type { TokenMeasurement } from '@warmfold/token-meter'
import type { EngineCore } from '../engine-core.ts'
import type { PlannedPrune } from '../engine-services.ts'
import type { SessionCompactionState } from '../session-compaction-state.ts'
import { cachePricesOf, decidePrune } from './prune-decision.ts'

/**
 * Weighs a prune pass that alone clears the pressure against folding now (see
 * `decidePrune`) and logs the decision with its figures as `compaction/prune-decision`.
 */
export function weighPrune(
  core: EngineCore,
  state: SessionCompactionState,
  header: RequestHeader,
  info: ModelInfo,
  plan: readonly PlannedPrune[],
  measurement: TokenMeasurement,
  thresholdTokens: number,
  overrule?: Pick<PruneDecisionData, 'action' | 'reason'>,
): PruneDecisionData {
  const session = state.session
  const target = `${header.config.provider}/${header.config.model} (session ${session.id})`
  const weighed = decidePrune({
    session,
    plan,
    measurement,
    thresholdTokens,
    prices: cachePricesOf(info.cachePrices, target),
    cacheTtlMs: info.cacheTtlMs,
    lastRequestAt: state.lastRequestAt,
    now: core.clock.now(),
  })
  const decision = overrule ? { ...weighed, ...overrule } : weighed
  session.append('compaction/prune-decision', decision)
  return decision
}
