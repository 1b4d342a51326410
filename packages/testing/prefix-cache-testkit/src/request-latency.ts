import type { LatencyProfile } from './latency-profile.ts'

/** The tokens of one request that take time, split as a latency profile prices them. */
export interface LatencyTokens {
  /** Prompt tokens not read from the cache (prefilled), those written to it included. */
  readonly uncachedTokens: number
  /** Prompt tokens read from the cache. */
  readonly cachedTokens: number
  /** Output tokens, thinking included when the provider counts it as output. */
  readonly outputTokens: number
}

/** One request's modelled duration, in milliseconds. */
export interface RequestLatency {
  /** Until the first output token: `ttftMs` + prefill + cache read. */
  readonly firstTokenMs: number
  /** Generating the output: `outputTokens / decodeTokensPerSecond`. */
  readonly decodeMs: number
  /** The whole request, end to end: `firstTokenMs + decodeMs`. */
  readonly totalMs: number
}

/**
 * How long one request takes end to end under `profile`, from sending it to its last output
 * token, in milliseconds:
 *
 * ```
 * ttftMs + 1000 × (uncached / prefillTokensPerSecond + cached / cachedTokensPerSecond
 *                  + output / decodeTokensPerSecond)
 * ```
 *
 * Every output token is counted at the decode rate, the first one included, although the first
 * also ends `firstTokenMs`: one token's time too many (under 30 ms for the built-in profiles).
 * It ignores what varies from one request to the next: queueing under load, rate limits and
 * retries, network jitter (the profile's `ttftMs` is a typical value), rates that slow down as the
 * context grows, and requests running at the same time competing for the same server.
 * @throws RangeError when a token count is negative or not a finite number.
 */
export function requestLatency(tokens: LatencyTokens, profile: LatencyProfile): RequestLatency {
  for (const key of ['uncachedTokens', 'cachedTokens', 'outputTokens'] as const) {
    const count = tokens[key]
    if (!(Number.isFinite(count) && count >= 0))
      throw new RangeError(`requestLatency: ${key} must be a finite number ≥ 0, got ${count}`)
  }
  const firstTokenMs =
    profile.ttftMs +
    (1000 * tokens.uncachedTokens) / profile.prefillTokensPerSecond +
    (1000 * tokens.cachedTokens) / profile.cachedTokensPerSecond
  const decodeMs = (1000 * tokens.outputTokens) / profile.decodeTokensPerSecond
  return { firstTokenMs, decodeMs, totalMs: firstTokenMs + decodeMs }
}

/** `requestLatency(tokens, profile).totalMs`: one request, end to end, in milliseconds. */
export function requestLatencyMs(tokens: LatencyTokens, profile: LatencyProfile): number {
  return requestLatency(tokens, profile).totalMs
}
