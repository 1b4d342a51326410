import type { Message } from '@warmfold/llm'
import type { RequestHeader, Session } from '@warmfold/session'

/** A conversation request an agent sent in this process: what a fork replays. */
export interface SentRequest {
  /** The header it was built from (the logged `request/header`). */
  readonly header: RequestHeader
  /** Its messages exactly as sent. */
  readonly messages: readonly Message[]
  /** The seq of the last surface node it held (`-1` for none). */
  readonly lastSeq: number
  readonly turn: number
  readonly step: number
  /** `sent` until its response has begun, `began` until it finished, then `answered`; `failed` when it failed or was aborted. */
  readonly stage: 'sent' | 'began' | 'answered' | 'failed'
}

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
  return { parentSessionId, parentSeq, header, cacheSessionId, ...(tools === undefined ? {} : { tools: new Set(tools) }), ...(cacheTtl === undefined ? {} : { cacheTtl }) }
}
