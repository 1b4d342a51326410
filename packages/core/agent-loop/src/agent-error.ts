const AGENT_ERROR_BRAND = Symbol.for('warmfold.agent.error')

/** Why an agent operation was refused. */
export type AgentErrorCode = 'BUSY' | 'CLOSED'

/** An agent operation was refused. Recognise it with {@link AgentError.isInstance}. */
export class AgentError extends Error {
  override readonly name = 'AgentError'
  readonly code: AgentErrorCode
  readonly [AGENT_ERROR_BRAND] = true

  constructor(code: AgentErrorCode, message: string) {
    super(message)
    this.code = code
  }

  /** Whether `value` is an `AgentError` from any copy of this package. */
  static isInstance(value: unknown): value is AgentError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[AGENT_ERROR_BRAND] === true
  }
}
