import { balancedCuts } from '@warmfold/compaction'
import type { CompactionAgent, CompactionResult } from '@warmfold/compaction'
import type { RequestHeader } from '@warmfold/session'
import type { ChooseRegion, HeadOutcome } from '../fold/compact-head.ts'
import { emptyCheckpointTokens, foldableNodes } from '../fold/compact-head.ts'
import { maxHeadTokens } from '../fold/summary-route.ts'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { EngineCore } from '../engine-core.ts'
import { planFoldCarry } from '../fold/fold-carry.ts'
import { keptUserBudget } from '../config/keep-user-messages.ts'
import { cutOversizedResults } from './oversized-results.ts'
import { weighPrune } from './weigh-prune.ts'
import type { SurfaceRegion } from '../fold/select-region.ts'
import { selectHeadRegion } from '../fold/select-region.ts'
import type { SessionCompactionState } from '../session-compaction-state.ts'

/**
 * The pressure trigger (run before every step): when the measured request is at or above the
 * threshold, first the cut of any tool result no request can carry (`cutOversizedResults`), then
 * a prune pass that alone clears it if it pays (see `decidePrune`), else a fold of the
 * head with the retained tail kept, up to `compactionRetries` extra passes; a failure logs
 * `compaction/failure` and backs off until the next user turn or a shrink.
 */
export async function relievePressure(
  core: EngineCore,
  agent: CompactionAgent,
  state: SessionCompactionState,
  header: RequestHeader,
  signal?: AbortSignal,
): Promise<CompactionResult | null> {
  const session = agent.session
  const { policy, budget, info } = await core.budgetFor(session, header)
  const meter = core.meter()
  let measurement = meter.measure(session)
  if (measurement.totalTokens < budget.thresholdTokens) return null
  // A result no request can carry is cut first, even while backed off: every request would fail.
  if (cutOversizedResults(core, state, header, info, budget, measurement) > 0) {
    measurement = meter.measure(session)
    if (measurement.totalTokens < budget.thresholdTokens) {
      state.clearBackOff()
      return null
    }
  }
  if (state.backedOff('pressure')) return null
  const route = await core.route(header, policy)
  let result: CompactionResult | null = null
  let reason = 'no balanced head region is left to summarize: the retained tail alone is above the threshold'
  // A prune that alone would clear the pressure, declined because folding costs less: the
  // fallback when the fold then cannot relieve the pressure.
  let declinedPrune = false
  const relieved = (): CompactionResult | null => {
    state.clearBackOff()
    return result
  }
  for (let attempt = 0; attempt <= policy.compactionRetries; attempt++) {
    if (signal?.aborted) break
    const pruner = core.pruner()
    const plan = pruner ? pruner.planSession(session) : []
    const saved = plan.reduce((sum, entry) => sum + entry.originalTokens - entry.prunedTokens, 0)
    if (pruner && plan.length > 0 && measurement.totalTokens - saved < budget.thresholdTokens) {
      // Pruning alone clears the pressure and no summary call follows, so it may rewrite
      // anywhere; it lands only where that costs less than the re-prefill it causes.
      if (weighPrune(core, state, header, info, plan, measurement, budget.thresholdTokens).action === 'prune') {
        pruner.pruneSession(session)
        return relieved()
      }
      declinedPrune = true
    }
    const actual = measurement.nodes.map((node) => node.tokens)
    const prices = actual.slice()
    for (const entry of plan) prices[entry.position] = entry.prunedTokens
    // The retained tail is measured as the conversation last sent it, so the region is the one
    // a session without the pruner would fold, and the prune (after the region, rule C4) makes
    // the request after the fold smaller. Measured on post-prune prices, the freed budget was
    // spent on a longer tail instead, and the pruner saved nothing at a fold.
    const retained = selectHeadRegion(session, actual, budget.retainTokens)
    if (!retained) break
    // At best the calls of this pressure fold what fits them into an empty checkpoint; when even
    // that leaves the request at or above the threshold, no summary call can relieve the
    // pressure, so none is made.
    const maxHead = maxHeadTokens(core.ctx, header, route)
    const empty = emptyCheckpointTokens(core.ctx)
    const foldable = foldableNodes(
      actual,
      balancedCuts(session.deriveMessages()),
      retained.end,
      maxHead,
      policy.compactionRetries + 1 - attempt,
      empty,
    )
    const headTokens = prices.slice(0, foldable).reduce((sum, price) => sum + price, 0)
    // Pinned and kept user messages of the head stay after the checkpoint whatever is folded.
    const pinnedTokens =
      foldable === 0
        ? 0
        : planFoldCarry(
            session,
            { start: 0, end: foldable - 1 },
            (position) => prices[position] as number,
            keptUserBudget(policy.keepUserMessages, budget.contextWindow),
          ).carriedTokens
    const best = measurement.totalTokens - saved - headTokens + pinnedTokens + empty
    if (foldable === 0 || best >= budget.thresholdTokens) {
      reason =
        maxHead <= 0
          ? `a summary call to ${route.policy.summarizationModel ?? header.config.model} has no room for any ` +
            `history: its ${route.limitTokens}-token budget goes to the system prompt, the tools, the instruction ` +
            `and the output (${reserveNote(route.outputReserveTokens)}the summary's own budget)`
          : foldable === 0
            ? `the oldest balanced segment of the surface does not fit the summary budget (${maxHead} tokens of ` +
              'head), so nothing can be summarized'
            : `the retained tail is irreducible: summarizing positions 0..${foldable - 1} (about ${headTokens} ` +
              `tokens${pinnedTokens ? `, ${pinnedTokens} of them pinned or kept` : ''}) would still leave about ` +
              `${best} tokens, at or above the threshold`
      break
    }
    // The head the summary prompt can hold; it replays the head unpruned, at its actual prices.
    const region = selectHeadRegion(session, actual, budget.retainTokens, { prices: actual, maxTokens: maxHead })
    if (!region) {
      reason = 'no balanced head region fits the summary budget'
      break
    }
    if (pruner && plan.length > 0) core.landPrunePlan(session, pruner, plan, region)
    // A retry after a context-length rejection picks a smaller head of the same surface, so
    // every landed prune stays after it (rule C4).
    let first: SurfaceRegion | null = region
    const choose: ChooseRegion = (current, maxHead) => {
      const chosen =
        first ?? selectHeadRegion(session, current, budget.retainTokens, { prices: current, maxTokens: maxHead })
      first = null
      return chosen
    }
    let outcome: HeadOutcome
    try {
      outcome = await core.compactHead(agent, header, route, choose, {
        trigger: 'pressure',
        turn: state.openTurn,
        stability: 'whole-surface',
        signal,
      })
    } catch (error) {
      if (!(error instanceof CompactionRefusal)) throw error
      if (error.code === 'cancelled') return result
      reason = `the summary was refused: ${error.message}`
      break
    }
    if (outcome.kind !== 'done') {
      reason = outcome.reason
      break
    }
    result = outcome.result
    measurement = meter.measure(session)
    if (measurement.totalTokens < budget.thresholdTokens) return relieved()
    reason = `still above the threshold after ${attempt + 1} compaction pass(es)`
  }
  if (signal?.aborted) return result
  // A fold attempt that failed may still have landed its tail prune, which can be enough.
  measurement = meter.measure(session)
  if (measurement.totalTokens < budget.thresholdTokens) return relieved()
  const pruner = core.pruner()
  if (declinedPrune && result === null && pruner) {
    // The fold that was cheaper could not be made: pruning still relieves the pressure.
    const plan = pruner.planSession(session)
    if (plan.length > 0) {
      weighPrune(core, state, header, info, plan, measurement, budget.thresholdTokens, {
        action: 'prune',
        reason: `the fold could not relieve the pressure (${reason}), so the prune lands after all`,
      })
      pruner.pruneSession(session)
      return relieved()
    }
  }
  session.append('compaction/failure', {
    trigger: 'pressure',
    reason,
    totalTokens: measurement.totalTokens,
    thresholdTokens: budget.thresholdTokens,
  })
  state.backOff('pressure')
  return result
}

/** The output reserve's share of a summary call's budget, when its reasoning effort has one. */
function reserveNote(outputReserveTokens: number): string {
  return outputReserveTokens ? `the reasoning effort's ${outputReserveTokens}-token output reserve plus ` : ''
}
