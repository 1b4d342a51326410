/** Where a request first differs from the best-matching earlier request. */
export type Divergence =
  /** No earlier request to compare with. */
  | { readonly part: 'first' }
  /** The whole prompt matched an earlier request. */
  | { readonly part: 'none' }
  /** Nothing of the family was seen before, but the previous request had another envelope. */
  | { readonly part: 'envelope'; readonly field: 'provider' | 'model' | 'reasoningEffort' | 'temperature' | 'stop' }
  /** The first differing byte, at `offset` characters into the prompt. */
  | {
      readonly part: 'tools' | 'system' | 'message'
      readonly index: number
      readonly blockIndex?: number
      readonly offset: number
    }
  /**
   * The prompt matched an earlier request of the family further than the live cache does: the
   * rest had expired on the virtual clock (the profile's `ttlMs`). `offset`: characters still
   * live (= `matchedChars`); `expiredChars`: characters after it that would also have matched
   * had they not expired; `idleMs`: virtual time since those characters were last sent.
   */
  | { readonly part: 'expired'; readonly offset: number; readonly expiredChars: number; readonly idleMs: number }

/** A durable rewrite logged in a session (it explains a cache break, rule C5). */
export interface LoggedRewrite {
  readonly type: 'compaction/summary' | 'compaction/prune' | 'request/header'
  readonly seq: number
}

/** What the simulated cache did with one request. */
export interface CacheObservation {
  /** Position among all observed requests, from 0. */
  readonly index: number
  readonly purpose: string
  readonly sessionId?: string
  /** The request family: provider, model, reasoning effort, temperature and stop. */
  readonly family: string
  readonly promptTokens: number
  readonly cachedTokens: number
  readonly uncachedTokens: number
  /**
   * Tokens of this request's prompt that it newly stored in the cache, under every profile:
   * `bytes` stores every uncached token, `blocks` the whole blocks not stored before, `anthropic`
   * the tokens up to its last breakpoint beyond what it read, `deepseek` the persisted units'
   * tokens beyond what it read. Always `0 ≤ cacheWriteTokens ≤ uncachedTokens`.
   */
  readonly cacheWriteTokens: number
  readonly promptChars: number
  /**
   * Longest common prefix with the best-matching earlier request of the family that is still
   * live (sent within the profile's `ttlMs`), in characters: a byte match, whatever the profile.
   */
  readonly matchedChars: number
  /**
   * For conversation requests: whether this request keeps every segment of the previous
   * conversation request of its session (same family) and adds at least one.
   */
  readonly extendsPrevious: boolean
  /** Durable rewrites logged in the session since its previous conversation request. */
  readonly rewritesSince: readonly LoggedRewrite[]
  readonly divergence: Divergence
}

/** Session totals over a set of observations. */
export interface CacheTotals {
  readonly requests: number
  readonly promptTokens: number
  readonly cachedTokens: number
  readonly uncachedTokens: number
  /** cachedTokens / promptTokens (0 when there were no prompt tokens). */
  readonly hitRatio: number
}

/** Sums `observations`. */
export function totalsOf(observations: readonly CacheObservation[]): CacheTotals {
  const promptTokens = observations.reduce((sum, observation) => sum + observation.promptTokens, 0)
  const cachedTokens = observations.reduce((sum, observation) => sum + observation.cachedTokens, 0)
  return {
    requests: observations.length,
    promptTokens,
    cachedTokens,
    uncachedTokens: promptTokens - cachedTokens,
    hitRatio: promptTokens ? cachedTokens / promptTokens : 0,
  }
}
