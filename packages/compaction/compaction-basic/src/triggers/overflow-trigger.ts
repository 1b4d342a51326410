import type { CompactionAgent, CompactionResult } from '@warmfold/compaction'
import type { RequestHeader } from '@warmfold/session'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { EngineCore } from '../engine-core.ts'
import { maximalHead } from '../fold/select-region.ts'
import type { SessionCompactionState } from '../session-compaction-state.ts'

/**
 * The overflow trigger: the provider rejected a request as too long (`CONTEXT_WINDOW_EXCEEDED`),
 * so the request must shrink whatever the threshold says. Prune everywhere first (the summary
 * prompt itself must fit), then fold the largest head that fits the summary budget.
 */
export async function recoverOverflow(
  core: EngineCore,
  agent: CompactionAgent,
  state: SessionCompactionState,
  header: RequestHeader,
  signal?: AbortSignal,
): Promise<CompactionResult | null> {
  const session = agent.session
  core.pruner()?.pruneSession(session)
  try {
    const outcome = await core.compactHead(agent, header, await core.route(header), maximalHead(session), {
      trigger: 'context-overflow',
      turn: state.openTurn,
      stability: 'whole-surface',
      signal,
    })
    return outcome.kind === 'done' ? outcome.result : null
  } catch (error) {
    if (error instanceof CompactionRefusal) return null
    throw error
  }
}
