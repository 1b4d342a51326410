import type { CompactionAgent, CompactionResult } from '@warmfold/compaction'
import type { RequestHeader } from '@warmfold/session'
import type { EngineCore } from '../engine-core.ts'
import type { SessionCompactionState } from '../session-compaction-state.ts'
import type { BackgroundFolds } from './background-scheduler.ts'
import { relievePressure } from './pressure-trigger.ts'

/**
 * A request boundary (`compactIfNeeded(agent, 'pressure')`, before every step): swap in a
 * background summary that is in hand; below the threshold, arm a background fold from the soft
 * threshold on; at the threshold, wait for the one in flight and otherwise fold on the turn's path
 * (`relievePressure`). The caller holds the session's compaction lock.
 */
export async function atRequestBoundary(
  core: EngineCore,
  background: BackgroundFolds | undefined,
  agent: CompactionAgent,
  state: SessionCompactionState,
  header: RequestHeader,
  signal?: AbortSignal,
): Promise<CompactionResult | null> {
  const session = agent.session
  const { budget } = await core.budgetFor(session, header)
  const meter = core.meter()
  // A summary in hand when the request reached H is swapped in at once: its timing says so (`ready`).
  const reached = meter.measure(session).totalTokens >= budget.thresholdTokens
  const swapped = (await background?.swapIfReady(state, reached)) ?? null
  const totalTokens = meter.measure(session).totalTokens
  background?.boundary(session, totalTokens)
  if (totalTokens < budget.thresholdTokens) {
    await background?.maybeArm(agent, state, header, budget.thresholdTokens, totalTokens)
    return swapped
  }
  const landed = (await background?.atThreshold(state, signal)) ?? null
  if (landed && meter.measure(session).totalTokens < budget.thresholdTokens) return landed
  if (signal?.aborted) return landed ?? swapped
  return (await relievePressure(core, agent, state, header, signal)) ?? landed ?? swapped
}
