import type { Session } from '@warmfold/session'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { FoldCarry } from './fold-carry.ts'
import type { TransactionInput } from './transaction-input.ts'

/** What the checks read of a fold transaction's input. */
type CheckedInput = Pick<TransactionInput, 'region' | 'stability' | 'signal'>

/** Refuses a checkpoint that is not smaller than what it shadows (carried nodes stay, so they do not count). */
export function assertShrinks(checkpointTokens: number, carry: FoldCarry): void {
  if (!carry.foldsHistory) {
    throw new CompactionRefusal(
      'summary',
      `every node of the region besides a leading checkpoint is pinned or kept (${carry.carriedSeqs.length} ` +
        'carried), so the checkpoint would fold nothing',
    )
  }
  if (checkpointTokens >= carry.shadowedTokens) {
    throw new CompactionRefusal(
      'summary',
      `checkpoint (${checkpointTokens} tokens) is not smaller than what it replaces (${carry.shadowedTokens} ` +
        `tokens${carry.carriedSeqs.length ? `; ${carry.carriedTokens} tokens of pinned or kept messages stay` : ''})`,
    )
  }
}

/** Refuses a cancelled compaction, or one whose region (or whole surface) changed meanwhile. */
export function assertCurrent(
  session: Session,
  input: CheckedInput,
  before: Session['surface'],
  regionSeqs: readonly number[],
): void {
  if (input.signal?.aborted)
    throw new CompactionRefusal('cancelled', `compaction aborted: ${String(input.signal.reason)}`)
  const now = session.surface
  const { start, end } = input.region
  const spanNow = now.nodes.slice(start, end + 1)
  const spanStable = spanNow.length === regionSeqs.length && spanNow.every((seq, index) => seq === regionSeqs[index])
  const wholeStable = now.replaceGeneration === before.replaceGeneration && now.nodes.length === before.nodes.length
  if (!spanStable || (input.stability === 'whole-surface' && !wholeStable)) {
    throw new CompactionRefusal(
      'changed',
      'the session surface changed while summarizing ' +
        `(${
          input.stability === 'whole-surface'
            ? 'the whole surface must stay unchanged during an automatic compaction'
            : `positions ${start}..${end} no longer hold the summarized nodes`
        }); ` +
        'no checkpoint was committed',
    )
  }
}
