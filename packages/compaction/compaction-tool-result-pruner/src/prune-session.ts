import type { ShadowedRange } from '@warmfold/compaction'
import { isPinned } from '@warmfold/compaction'
import type { Message, ToolResultContent, ToolResultMessage } from '@warmfold/llm'
import { createToolResultMessage } from '@warmfold/llm'
import type { Session, SessionEventMap } from '@warmfold/session'
import type { PruneBudget } from './prune-budget.ts'
import { pruneContent } from './prune-content.ts'
import type { PrunedEntry, PrunePlanEntry, PruneResult } from './prune-plan.ts'

/** What pricing a rewrite needs of the token meter: `ctx.tokenMeter` fits. */
export interface MessagePricer {
  estimateMessage(message: Message): number
}

/**
 * The rewrite of the tool result at surface `position` to `budget` (head + marker + tail, see
 * `pruneContent`), priced with `meter`; `null` when that node is not a `tool/result`, is pinned
 * (`pinMessage` from `@warmfold/compaction`: the host asked for it verbatim) or its text is
 * within the budget. **Pure**, like `ToolResultPruner.planSession`, which is this over every
 * surface node with the service's budget; a compaction engine uses it directly to cut one
 * result to a budget of its own (see `applyPrunePlan`).
 * @throws RangeError when `budget` is invalid (see `checkPruneBudget`).
 */
export function planResultPrune(
  session: Session,
  position: number,
  budget: PruneBudget,
  meter: MessagePricer,
): PrunePlanEntry | null {
  const seq = session.surface.nodes[position]
  if (seq === undefined) return null
  const event = session.eventAt(seq)
  if (event?.type !== 'tool/result' || isPinned(session, seq)) return null
  const original = event.data.message
  const content = pruneContent(original.content[0].content, budget)
  if (content === null) return null
  const replacement = replacementMessage(original, content)
  return Object.freeze({
    seq,
    position,
    original,
    content: Object.freeze(content),
    replacement,
    originalTokens: meter.estimateMessage(original),
    prunedTokens: meter.estimateMessage(replacement),
  })
}

/**
 * Lands the rewrites of `plan`, in its order (surface order for a plan from `planSession`). For
 * each one it appends
 * 1. `compaction/prune { shadowedRange: { start: position, end: position }, shadowedSeqs: [seq],
 *    shadowedTokenCount: originalTokens }`, the pricing event, and immediately after it
 * 2. a `tool/result` whose message is the entry's `replacement` (same `toolCallId`, same
 *    `isError`, the pruned content), with the original event's `toolName`, `turn` and `step`,
 *    as `{ op: 'replace', start: position, end: position, sourceEventSeqs: [seq] }`.
 *
 * Each pair is appended as one `session.unit`, so a store persists both events or neither.
 * Each replace swaps one node for one node, so no other node's position moves and every node
 * not rewritten derives the same bytes as before. The original events stay in the log.
 *
 * @throws whatever the session throws when it rejects an append (an invariant checker, a
 *   closed session); rewrites landed before it stay in the log. Also throws when the surface
 *   changed since the plan was made (an entry's position no longer holds its seq), before
 *   writing anything more.
 */
export function applyPrunePlan(session: Session, plan: readonly PrunePlanEntry[]): PruneResult {
  const entries: PrunedEntry[] = []
  let savedTokens = 0
  for (const { seq, position, replacement, originalTokens, prunedTokens } of plan) {
    if (session.surface.nodes[position] !== seq) {
      throw new Error(
        `ToolResultPruner: surface position ${position} no longer holds seq ${seq}; the session changed during ` +
          `the prune pass`,
      )
    }
    const source = session.eventAt(seq)?.data as SessionEventMap['tool/result']
    const shadowedRange: ShadowedRange = { start: position, end: position }
    // One unit: a store writes both or neither, so a crash cannot leave a prune without its replacement.
    const [pricing, landed] = session.unit(() => [
      session.append('compaction/prune', { shadowedRange, shadowedSeqs: [seq], shadowedTokenCount: originalTokens }),
      session.append('tool/result', replacementData(source, replacement), {
        op: 'replace',
        start: position,
        end: position,
        sourceEventSeqs: [seq],
      }),
    ])
    entries.push(
      Object.freeze({ seq, replacementSeq: landed.seq, pruneSeq: pricing.seq, position, originalTokens, prunedTokens }),
    )
    savedTokens += originalTokens - prunedTokens
  }
  return Object.freeze({ entries: Object.freeze(entries), savedTokens })
}

/** The content-only rewrite of `original`: same call id and error flag, new content. */
function replacementMessage(original: ToolResultMessage, content: readonly ToolResultContent[]): ToolResultMessage {
  const block = original.content[0]
  return createToolResultMessage(block.toolCallId, content, { isError: block.isError === true })
}

/**
 * The replacement event's data. `toolName`, `turn` and `step` describe the same call and are
 * copied; `error` is not: it is the failure text of the original call event (which stays in
 * the log), and copying it would count one failed call twice. The prompt-visible error flag
 * travels on the message (`isError`).
 */
function replacementData(
  source: SessionEventMap['tool/result'],
  message: ToolResultMessage,
): SessionEventMap['tool/result'] {
  const data: SessionEventMap['tool/result'] = { message }
  if (source.toolName !== undefined) data.toolName = source.toolName
  if (source.turn !== undefined) data.turn = source.turn
  if (source.step !== undefined) data.step = source.step
  return data
}
