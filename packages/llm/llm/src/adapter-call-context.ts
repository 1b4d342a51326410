import { LlmError } from './llm-error.ts'
import { secretRedactor } from './secret-redactor.ts'

/** What an adapter's error and stream mappers know about one call. */
export interface AdapterCallContext {
  /** Provider id the call was routed to. */
  readonly provider: string
  /** Model id of the call. */
  readonly model: string
  /** The call's signal: an error after it aborted, or a stream that ends after it, is `ABORTED`. */
  readonly signal?: AbortSignal
  /**
   * The API key (or the strings an adapter is told to scrub), removed from every message, cause
   * and raw usage object that would echo it.
   */
  readonly secret?: string | readonly string[]
}

/** The context of a call to `options`'s provider and model, scrubbing `secret`. */
export function callContext(options: Omit<AdapterCallContext, 'secret'>, secret?: string | readonly string[]) {
  return { provider: options.provider, model: options.model, signal: options.signal, secret }
}

/** `ABORTED` (not retryable): `the call to <provider>/<model> was aborted`, with `cause`. */
export function callAborted(context: AdapterCallContext, cause: unknown): LlmError {
  return new LlmError('ABORTED', `the call to ${context.provider}/${context.model} was aborted`, {
    provider: context.provider,
    retryable: false,
    cause,
  })
}

/**
 * Where every adapter's error mapping starts: `error` itself when it is an `LlmError` already;
 * {@link callAborted} (its cause redacted) when the call's signal aborted, `error` is an
 * `AbortError`, or `sdkAbort` says it is the SDK's own abort error; else undefined.
 */
export function mappedOrAborted(error: unknown, context: AdapterCallContext, sdkAbort = false): LlmError | undefined {
  if (LlmError.isInstance(error)) return error
  if (!context.signal?.aborted && !sdkAbort && !(error instanceof Error && error.name === 'AbortError'))
    return undefined
  return callAborted(context, secretRedactor(context.secret).error(context.signal?.reason ?? error))
}

/**
 * `STREAM_INCOMPLETE` (retryable) for a stream that ended before its last event:
 * `the stream from <provider>/<model> ended after <what>; the reply is incomplete`.
 */
export function streamIncomplete(context: AdapterCallContext, what: string): LlmError {
  return new LlmError(
    'STREAM_INCOMPLETE',
    `the stream from ${context.provider}/${context.model} ended after ${what}; the reply is incomplete`,
    { provider: context.provider, retryable: true },
  )
}
