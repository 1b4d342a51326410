import type { Message } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'

/** A conversation request an agent sent in this process: what a fork replays. */
export interface LastSentRequest {
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
