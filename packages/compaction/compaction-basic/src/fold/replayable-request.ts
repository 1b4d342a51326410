import type { AgentHandle, AgentRequest } from '@warmfold/agent-loop'
import type { CompactionAgent } from '@warmfold/compaction'
import type { Session } from '@warmfold/session'

/**
 * The request a summary call of `agent`'s session can replay: the agent's last answered
 * conversation request (`AgentHandle.lastRequest`; its cache entry exists), when the agent is the
 * loop's. A bare `CompactionAgent` has none, and the summary replays the region instead.
 */
export function replayableRequest(agent: CompactionAgent): AgentRequest | undefined {
  return (agent as Partial<Pick<AgentHandle, 'lastRequest'>>).lastRequest
}

/**
 * Whether `request` still holds the surface's nodes `0..end` (the same seqs, so the same bytes):
 * a summary of those nodes can then replay the request whole and read its cache entry.
 */
export function holdsHead(request: AgentRequest, session: Session, end: number): boolean {
  const nodes = session.surface.nodes
  if (end >= request.nodes.length || end >= nodes.length) return false
  for (let position = 0; position <= end; position++) if (request.nodes[position] !== nodes[position]) return false
  return true
}

/**
 * Whether `session` is a fork's (it opens with `agent/fork`). A fork folds only when it must (at
 * the threshold) or is asked (`compactNow`, `compactIfNeeded(agent, 'idle')`), never beside its
 * turn: its session is closed when that turn ends, so a background or idle fold would be thrown
 * away with its summary call, paid for and unused.
 */
export function isForkSession(session: Session): boolean {
  return session.eventAt(0)?.type === 'agent/fork'
}
