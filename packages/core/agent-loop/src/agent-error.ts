import type { Message } from '@warmfold/llm'

const AGENT_ERROR_BRAND = Symbol.for('warmfold.agent.error')

/**
 * Why an agent operation was refused or failed.
 * - `BUSY`: `runMaintenance` while a turn or another task runs.
 * - `CLOSED`: the agent can no longer be used.
 * - `PREEMPTED`: a followup cancelled a maintenance task that yields to input (the abort reason
 *   of its signal).
 * - `LOG_FAILED`: the session log refused an append the loop needed (a validator, a closed
 *   session) or a flush failed, so a turn could not be started, closed or made durable.
 * - `FORK_REFUSED`: `fork()` cannot replay the parent's last request (none was answered in this
 *   process yet, one is in flight, or the child session exists).
 * - `TURN_FAILED`: a turn ended with reason `error` (its request failed for good, a service it
 *   needed was missing, a hook threw); `turnErrorCode` is the code logged on its `turn/end`.
 */
export type AgentErrorCode = 'BUSY' | 'CLOSED' | 'FORK_REFUSED' | 'LOG_FAILED' | 'PREEMPTED' | 'TURN_FAILED'

/** An agent operation was refused or failed. Recognise it with {@link AgentError.isInstance}. */
export class AgentError extends Error {
  override readonly name = 'AgentError'
  readonly code: AgentErrorCode
  /** The turn the failure belongs to, when there is one. */
  readonly turn?: number
  /**
   * User messages that were never logged because of the failure (the one whose turn could not
   * start, then the followups still queued), oldest first. The host may queue them again.
   */
  readonly unsent: readonly Message[]
  /** For `TURN_FAILED`: the code on the turn's `turn/end` (`AUTH`, `SERVICE_MISSING`, …). */
  readonly turnErrorCode?: string
  readonly [AGENT_ERROR_BRAND] = true

  constructor(
    code: AgentErrorCode,
    message: string,
    options: { cause?: unknown; turn?: number; unsent?: readonly Message[]; turnErrorCode?: string } = {},
  ) {
    super(message, { cause: options.cause })
    this.code = code
    this.turn = options.turn
    this.unsent = Object.freeze([...(options.unsent ?? [])])
    if (options.turnErrorCode !== undefined) this.turnErrorCode = options.turnErrorCode
  }

  /** Whether `value` is an `AgentError` from any copy of this package. */
  static isInstance(value: unknown): value is AgentError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[AGENT_ERROR_BRAND] === true
  }
}

/** A thrown value's message, for an error text. */
export function describe(value: unknown): string {
  return value instanceof Error ? value.message : String(value)
}
