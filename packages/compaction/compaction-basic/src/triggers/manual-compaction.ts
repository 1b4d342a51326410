import type { CompactionAgent, CompactionResult } from '@warmfold/compaction'
import { balancedCuts, ManualCompactionError } from '@warmfold/compaction'
import { CompactionRefusal } from '../compaction-refusal.ts'
import type { EngineCore } from '../engine-core.ts'
import { maximalHead } from '../fold/select-region.ts'
import type { SessionCompactionState } from '../session-compaction-state.ts'

/**
 * The task `compactNow` runs as maintenance: fold the largest head that fits, even below the
 * threshold, and flush.
 * @throws ManualCompactionError for every expected failure (busy, refused summary, persistence).
 */
export async function compactManually(
  core: EngineCore,
  agent: CompactionAgent,
  state: SessionCompactionState,
  signal: AbortSignal,
): Promise<CompactionResult | null> {
  const session = agent.session
  const header = session.requestHeader()
  if (!header) return null
  const release = state.lock()
  if (!release) throw new ManualCompactionError('busy', `a compaction of session ${session.id} is already running`)
  let result: CompactionResult
  try {
    state.closeOpenCompaction()
    const outcome = await core.compactHead(agent, header, await core.route(header), maximalHead(session), {
      trigger: 'manual',
      turn: null,
      stability: 'selected-span',
      signal,
    })
    if (outcome.kind === 'nothing') return null
    if (outcome.kind === 'unfit') throw new ManualCompactionError('summary', outcome.reason)
    result = outcome.result
  } catch (error) {
    if (error instanceof CompactionRefusal) throw new ManualCompactionError(error.code, error.message, { cause: error })
    throw error
  } finally {
    release()
  }
  try {
    await core.ctx.sessions.flush(session)
  } catch (error) {
    throw new ManualCompactionError(
      'persistence',
      `the checkpoint was committed but the session could not be flushed: ${(error as Error).message}`,
      { cause: error },
    )
  }
  return result
}

/**
 * `compactRegion`: folds surface positions `start..end`, whose both edges must be tool-pairing
 * balanced.
 * @throws RangeError for a bad range, Error when the session has no header or a compaction is
 *   running, CompactionRefusal when the summary was refused.
 */
export async function compactSpan(
  core: EngineCore,
  agent: CompactionAgent,
  state: SessionCompactionState,
  start: number,
  end: number,
  signal?: AbortSignal,
): Promise<CompactionResult> {
  const session = agent.session
  const header = session.requestHeader()
  if (!header)
    throw new Error(
      `compactRegion: session ${session.id} has no request header yet, so there is no route to summarize with`,
    )
  const size = session.surface.nodes.length
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end >= size) {
    throw new RangeError(`compactRegion: ${start}..${end} is not a range of surface positions 0..${size - 1}`)
  }
  const cuts = balancedCuts(session.deriveMessages())
  if (!cuts[start] || !cuts[end + 1])
    throw new RangeError(
      `compactRegion: ${start}..${end} separates a tool call from its result (${cuts[start] ? 'end' : 'start'} edge)`,
    )
  const release = state.lock()
  if (!release) throw new Error(`compactRegion: a compaction of session ${session.id} is already running`)
  try {
    state.closeOpenCompaction()
    const outcome = await core.compactHead(agent, header, await core.route(header), () => ({ start, end }), {
      trigger: 'manual',
      turn: state.openTurn,
      stability: 'selected-span',
      signal,
    })
    if (outcome.kind !== 'done') throw new CompactionRefusal('summary', outcome.reason)
    return outcome.result
  } finally {
    release()
  }
}
