import type { PrunePlanEntry } from '@warmfold/compaction-tool-result-pruner'
import { applyPrunePlan, codePointLength, planResultPrune, PRUNE_MARKER } from '@warmfold/compaction-tool-result-pruner'
import type { ModelInfo } from '@warmfold/llm'
import { textOf } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'
import type { TokenMeasurement } from '@warmfold/token-meter'
import type { CompactionBudget } from '../config/compaction-budget.ts'
import type { EngineCore } from '../engine-core.ts'
import type { SessionCompactionState } from '../session-compaction-state.ts'
import { weighPrune } from './weigh-prune.ts'

const MARKER_LENGTH = codePointLength(PRUNE_MARKER)

/** Share of a cut result's kept text taken from its start (the pruner's default budget keeps 4:1). */
const HEAD_SHARE = 0.8

/**
 * The most tokens one tool result can take and still be sent: the window less the output the
 * conversation reserves and its system prompt and tools. A result above it fails every request
 * that carries it, and no fold can help (a summary call would have to carry it too).
 */
export function requestRoom(budget: CompactionBudget, measurement: TokenMeasurement): number {
  return budget.contextWindow - budget.reservedOutputTokens - measurement.envelopeTokens
}

/**
 * Cuts every unpinned tool result of the surface that alone is larger than {@link requestRoom}
 * to its head + `PRUNE_MARKER` + tail, about the retained tail's budget in tokens (at most half
 * the room), whether or not a pruner is mounted: without this one such result (a log dump, a
 * binary file read as text) made every later turn fail with `CONTEXT_WINDOW_EXCEEDED`. Each cut
 * is logged as a `compaction/prune-decision` (`action: 'prune'`, the reason naming the result
 * and the room) followed by the pruner's `compaction/prune` and content-only replacement; the
 * original stays in the log. A result a request can still carry is left to the pruner and the
 * folds, however large.
 * @returns how many results were cut.
 */
export function cutOversizedResults(
  core: EngineCore,
  state: SessionCompactionState,
  header: RequestHeader,
  info: ModelInfo,
  budget: CompactionBudget,
  measurement: TokenMeasurement,
): number {
  const session = state.session
  const room = requestRoom(budget, measurement)
  const target = Math.max(1, Math.min(budget.retainTokens, Math.floor(room / 2)))
  const meter = core.meter()
  let cut = 0
  for (const [position, node] of measurement.nodes.entries()) {
    if (node.tokens <= room) continue
    const event = session.eventAt(node.seq)
    if (event?.type !== 'tool/result') continue
    // The meter's own ratio of code points to tokens for this result sizes the budget.
    const textChars = codePointLength(textOf(event.data.message.content[0].content))
    const keep = Math.max(0, Math.floor((textChars * target) / node.tokens) - MARKER_LENGTH)
    const headChars = Math.ceil(keep * HEAD_SHARE)
    const budgetChars = { thresholdChars: keep + MARKER_LENGTH, headChars, tailChars: keep - headChars }
    const entry: PrunePlanEntry | null = planResultPrune(session, position, budgetChars, meter)
    if (!entry) continue
    const route = `${header.config.provider}/${header.config.model}`
    weighPrune(core, state, header, info, [entry], measurement, budget.thresholdTokens, {
      action: 'prune',
      reason:
        `a tool result of about ${entry.originalTokens} tokens (seq ${entry.seq}) is larger than any request to ` +
        `${route} can hold (${room} tokens: the ${budget.contextWindow}-token window less the output reserve and ` +
        `the system prompt and tools), so it is cut to its head and tail (about ${entry.prunedTokens} tokens)`,
    })
    applyPrunePlan(session, [entry])
    cut += 1
  }
  return cut
}
