import type { RequestHeader, Session } from '@warmfold/session'

/** What makes an agent a fork: read from its session's `agent/fork` event. */
export interface ForkLineage {
  readonly parentSessionId: string
  readonly parentSeq: number
  /** The header every request of the fork sends, unchanged (the parent's). */
  readonly header: RequestHeader
  /** The session whose prompt cache the fork's requests read (`GenerateOptions.cacheSessionId`). */
  readonly cacheSessionId: string
  /** The tools the fork may call; absent: all. */
  readonly tools?: ReadonlySet<string>
  /** `short`: the fork's requests ask for the provider's shortest cache lifetime (`GenerateOptions.cacheTtl`). */
  readonly cacheTtl?: 'short'
}

/** The lineage of a fork's session, or `undefined` for a session that is not a fork. */
export function forkLineageOf(session: Session): ForkLineage | undefined {
  // A fork's session starts with its `agent/fork` event (see `agent.fork`).
  const event = session.eventAt(0)
  if (event?.type !== 'agent/fork') return undefined
  const { parentSessionId, parentSeq, header, cacheSessionId, tools, cacheTtl } = event.data
  return {
    parentSessionId,
    parentSeq,
    header,
    cacheSessionId,
    ...(tools === undefined ? {} : { tools: new Set(tools) }),
    ...(cacheTtl === undefined ? {} : { cacheTtl }),
  }
}
