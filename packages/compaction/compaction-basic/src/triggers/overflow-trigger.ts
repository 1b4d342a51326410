import type { CompactionResult } from '@warmfold/compaction'
import type { RequestHeader, Session } from '@warmfold/session'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { EngineCore } from '../engine-core.ts'
import { maximalHead } from '../fold/select-region.ts'
import { compactionState } from '../session-compaction-state.ts'

/**
 * The overflow trigger: the provider rejected a request as too long (`CONTEXT_WINDOW_EXCEEDED`),
 * so the request must shrink whatever the threshold says. Prune everywhere first (the summary
 * prompt itself must fit), then fold the largest head that fits the summary budget.
 */
export async function recoverOverflow(
  core: EngineCore,
  session: Session,
  header: RequestHeader,
  signal?: AbortSignal,
): Promise<CompactionResult | null> {
  core.pruner()?.pruneSession(session)
  try {
    const outcome = await core.compactHead(session, header, await core.route(header), maximalHead(session), {
      trigger: 'context-overflow',
      turn: compactionState(session).openTurn,
      stability: 'whole-surface',
      signal,
    })
    return outcome.kind === 'done' ? outcome.result : null
  } catch (error) {
    if (error instanceof CompactionRefusal) return null
    throw error
  }
}
