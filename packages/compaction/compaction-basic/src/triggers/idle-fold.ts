import type { CompactionAgent, CompactionResult } from '@warmfold/compaction'
import type { RequestHeader } from '@warmfold/session'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { EngineCore } from '../engine-core.ts'
import { resolveIdleCompaction } from '../config/idle-compaction-config.ts'
import { maximalHead } from '../fold/select-region.ts'

/**
 * `compactIfNeeded(agent, 'idle')` called directly: the idle fold on the turn's path, when the
 * request is at least `idle.minPressure` × the threshold. It folds the largest head that fits
 * (the whole surface when it does), so the summary call replays the last request's messages
 * exactly plus the instruction: the prefix whose cache entry is still warm (a provider that
 * caches only at breakpoints, like Anthropic, holds no live entry at the end of an older head).
 * The engine's own idle timer starts the same fold in the background instead (see
 * `BackgroundFolds`).
 */
export async function foldWhileWarm(
  core: EngineCore,
  agent: CompactionAgent,
  header: RequestHeader,
  signal?: AbortSignal,
): Promise<CompactionResult | null> {
  const session = agent.session
  const { policy, budget } = await core.budgetFor(session, header)
  const { minPressure } = resolveIdleCompaction(core.config.idle)
  const totalTokens = core.meter().measure(session).totalTokens
  if (totalTokens < minPressure * budget.thresholdTokens || signal?.aborted) return null
  const fail = (reason: string) =>
    void session.append('compaction/failure', {
      trigger: 'idle',
      reason,
      totalTokens,
      thresholdTokens: budget.thresholdTokens,
    })
  try {
    const outcome = await core.compactHead(agent, header, await core.route(header, policy), maximalHead(session), {
      trigger: 'idle',
      turn: null,
      stability: 'whole-surface',
      signal,
    })
    if (outcome.kind === 'done') return outcome.result
    fail(outcome.reason)
  } catch (error) {
    if (!(error instanceof CompactionRefusal)) throw error
    if (error.code !== 'cancelled') fail(`the summary was refused: ${error.message}`)
  }
  return null
}
