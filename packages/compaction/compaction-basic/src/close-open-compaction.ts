import type { Session, SessionEvent } from '@warmfold/session'
import { compactionState } from './session-compaction-state.ts'

/**
 * Closes a compaction bracket that a previous process left open (it ended before logging the
 * `compaction/end`: a crash, a kill, a torn last line), saying what really happened. When the
 * checkpoint had landed, the compaction committed: the end carries no `error`, only
 * `recovered: true`. Otherwise it records why no checkpoint was committed.
 *
 * @returns the closing event, or `undefined` when no bracket is open.
 */
export function closeOpenCompaction(session: Session): SessionEvent<'compaction/end'> | undefined {
  const state = compactionState(session)
  const open = state.openCompaction
  if (!open) return undefined
  // A background fold of this process keeps its bracket open on purpose while it runs.
  if (state.background && state.background.status !== 'closed' && state.background.compactionId === open.compactionId)
    return undefined
  const { compactionId, turn } = open
  if (open.checkpointSeq !== undefined) return session.append('compaction/end', { compactionId, turn, recovered: true })
  const error =
    open.summarySeq === undefined
      ? 'interrupted: the process ended before this compaction finished; no checkpoint was committed'
      : `interrupted: the process ended after the summary (seq ${open.summarySeq}) but before its checkpoint replaced the region; no checkpoint was committed`
  return session.append('compaction/end', { compactionId, turn, error, recovered: true })
}
