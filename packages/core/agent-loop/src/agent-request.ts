import type { Message } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'

/**
 * A conversation request an agent sent in this process, and how far it got. The last one the
 * provider answered is what a replay reads (DESIGN §5.5: a fork and a warm summary call are that
 * request plus one message): its cache entry exists.
 */
export interface AgentRequest {
  /** The header it was built from (the logged `request/header`). */
  readonly header: RequestHeader
  /** Its messages exactly as sent. */
  readonly messages: readonly Message[]
  /** The surface seqs its messages were derived from, in order (one per message). */
  readonly nodes: readonly number[]
  readonly turn: number
  readonly step: number
  /**
   * `sent` until its response has begun, `began` until it finished, then `answered`; `failed` when it
   * failed or was aborted.
   */
  readonly stage: 'sent' | 'began' | 'answered' | 'failed'
}
