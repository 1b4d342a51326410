/**
 * A probed request failed. The message is complete for a person: the request, the URL it went
 * to, and what the endpoint answered (HTTP status and the start of its body, or the connection
 * failure), with the API key redacted. A command line prints it without a stack.
 */
export class CacheProbeError extends Error {
  override readonly name = 'CacheProbeError'

  constructor(
    message: string,
    /**
     * What went wrong: an `LlmError` code of the adapter (`NETWORK`, `TIMEOUT`, `AUTH`, `INVALID_REQUEST`,
     * `SERVER`, ...), `UNKNOWN` for any other error, `NO_USAGE` or `NO_CACHED_TOKENS` for an answer without the
     * numbers the probe measures.
     */
    readonly failure: string,
    /** The URL the request went to (never with credentials: the probe refuses them). */
    readonly url: string,
    /** The HTTP status the endpoint answered, when it answered. */
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}
