const LLM_ERROR_BRAND = Symbol.for('warmfold.llm.error')

/**
 * Error codes an adapter or the runtime reports. Handlers switch on the code, never on the
 * message text.
 */
export type LlmErrorCode =
  | 'CONTEXT_WINDOW_EXCEEDED'
  | 'RATE_LIMITED'
  | 'SERVER'
  | 'AUTH'
  | 'INVALID_REQUEST'
  | 'ABORTED'
  | 'MAX_TOKENS'
  | 'TIMEOUT'
  | 'NETWORK'
  | 'INVALID_RESPONSE'
  | 'STREAM_INCOMPLETE'
  | 'UNKNOWN_PROVIDER'
  | 'UNKNOWN_MODEL'
  | 'UNSUPPORTED_REASONING_EFFORT'

/** Extra facts attached to an {@link LlmError}. */
export interface LlmErrorOptions {
  /** HTTP status, when the error came from a response. */
  status?: number
  /** The provider id the failed call targeted. */
  provider?: string
  /** Whether retrying the same request may succeed. */
  retryable?: boolean
  /** Seconds the provider asked the caller to wait before retrying. */
  retryAfterSeconds?: number
  /** The underlying error. */
  cause?: unknown
}

/**
 * An LLM failure with a machine-readable {@link LlmErrorCode}.
 *
 * Recognise it with {@link LlmError.isInstance}, never `instanceof`: two copies of this
 * package in one process are different classes, but share the brand symbol.
 */
export class LlmError extends Error {
  override readonly name = 'LlmError'
  readonly code: LlmErrorCode
  readonly status?: number
  readonly provider?: string
  readonly retryable: boolean
  readonly retryAfterSeconds?: number
  readonly [LLM_ERROR_BRAND] = true

  constructor(code: LlmErrorCode, message: string, options: LlmErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.status = options.status
    this.provider = options.provider
    this.retryable =
      options.retryable ?? (code === 'RATE_LIMITED' || code === 'SERVER' || code === 'NETWORK' || code === 'TIMEOUT')
    this.retryAfterSeconds = options.retryAfterSeconds
  }

  /** Whether `value` is an `LlmError` from any copy of this package. */
  static isInstance(value: unknown): value is LlmError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[LLM_ERROR_BRAND] === true
  }
}
