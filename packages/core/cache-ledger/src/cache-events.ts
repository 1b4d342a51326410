/** Where a request's prompt first differs from the best-matching earlier request of its cache family. */
export interface CacheDivergence {
  /**
   * `first`: no earlier request of the family; `none`: the whole prompt matched; `envelope`: a
   * prompt-shaping setting differs from the previous request (`field`); `system`, `tools`,
   * `message`: the first differing character is there.
   */
  readonly part: 'first' | 'none' | 'envelope' | 'system' | 'tools' | 'message'
  /** For `envelope`: `provider`, `model`, `reasoningEffort`, `temperature` or `stop`. */
  readonly field?: string
  /** For `tools`: the tool's index; for `message`: the message's index. */
  readonly index?: number
  /** For `message`: the message's role. */
  readonly role?: string
  /** Characters of canonical prompt before the first difference. */
  readonly charOffset: number
}

/**
 * Why the prefix broke: `fold` (a checkpoint replaced history), `prune` (a tool result was
 * rewritten), `envelope` (effort, temperature, stop, model or provider changed), `tools` (tool
 * definitions changed), `expired` (idle longer than the provider's cache TTL), `provider` (the
 * prefix was identical but the provider reported fewer cached tokens: eviction, routing, lag),
 * `unknown` (the prompt changed without a logged reason); `none` when nothing broke.
 */
export type CacheBreakCause = 'none' | 'fold' | 'prune' | 'envelope' | 'tools' | 'expired' | 'provider' | 'unknown'

declare module '@warmfold/session' {
  interface SessionEventMap {
    /**
     * One request the host sent through `ctx.llm` and what the provider reported for it. Token
     * fields are `null` when the provider did not report them (never guessed as 0).
     */
    'cache/observation': {
      /** The request's purpose (`conversation`, `compaction`, …). */
      purpose: string
      provider: string
      model: string
      /** Prompt tokens as the provider reported them (uncached + read + written). */
      promptTokens: number | null
      cachedTokens: number | null
      cacheWriteTokens: number | null
      uncachedTokens: number | null
      outputTokens: number | null
      /** Characters of the canonical prompt (system, tools, messages). */
      promptChars: number
      /** Characters of the prompt shared with the best-matching earlier request of the family: what could be cached. */
      expectedChars: number
      divergence: CacheDivergence
      cause: CacheBreakCause
      /** Milliseconds since the family's previous request, or null for the first. */
      idleMs: number | null
    }
    /** A summary call that is not a warm replay of the last conversation request (rule C2/C3), seen before it was sent. */
    'cache/guard': {
      /** `warn`: the call went ahead; `refuse`: the engine refused the compaction. */
      action: 'warn' | 'refuse'
      provider: string
      model: string
      divergence: CacheDivergence
      /** One sentence naming what differs. */
      reason: string
    }
  }
}

/** The event types this package adds to the session log. */
export const CACHE_EVENT_TYPES = ['cache/observation', 'cache/guard'] as const
