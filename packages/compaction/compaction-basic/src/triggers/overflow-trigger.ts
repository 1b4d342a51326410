import type { CompactionAgent, CompactionResult } from '@warmfold/compaction'
import type { RequestHeader } from '@warmfold/session'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { EngineCore } from '../engine-core.ts'
import { maximalHead } from '../fold/select-region.ts'
import { cutOversizedResults } from './oversized-results.ts'
import type { SessionCompactionState } from '../session-compaction-state.ts'

/**
 * The overflow trigger: the provider rejected a request as too long (`CONTEXT_WINDOW_EXCEEDED`),
 * so the request must shrink whatever the threshold says. Prune everywhere first (the summary
 * prompt itself must fit) and cut any tool result no request can carry (`cutOversizedResults`;
 * when that alone brings the request below the threshold, no summary call follows), then fold
 * the largest head that fits the summary budget.
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
  const { budget, info } = await core.budgetFor(session, header)
  if (cutOversizedResults(core, state, header, info, budget, core.meter().measure(session)) > 0) {
    // The cut alone brought the request below the threshold: the step is retried without a summary call.
    if (core.meter().measure(session).totalTokens < budget.thresholdTokens) return null
  }
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
