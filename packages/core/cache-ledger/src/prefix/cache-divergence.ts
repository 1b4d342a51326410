/**
 * Where a request's prompt first differs from the request it is compared with: for a
 * conversation request the session's previous conversation request, for a summary call the
 * session's last conversation request (rule C3), otherwise the best-matching earlier request of
 * its cache family.
 */
export interface CacheDivergence {
  /**
   * `first`: nothing to compare with (no earlier request of the session or the family);
   * `none`: the request keeps the whole compared prefix (it only appends; a summary call replays
   * it and adds one instruction); `envelope`: a prompt-shaping setting differs (`field`);
   * `tools`, `system`, `message`: the first differing part of the prompt.
   */
  readonly part: 'first' | 'none' | 'envelope' | 'tools' | 'system' | 'message'
  /** For `envelope`: `provider`, `model`, `reasoningEffort`, `temperature` or `stop`. */
  readonly field?: string
  /** For `tools`: the tool's position; for `message`: the message's position in the request. */
  readonly index?: number
  /** For `message`: the role of the request's message at `index`. */
  readonly role?: string
  /**
   * Characters of the prompt before the first difference (0 for `envelope`; counted as
   * `cache/observation` data's `chars` counts them); absent for `first` and `none`. Exact to the
   * content block: a block that differs counts from its start.
   */
  readonly charOffset?: number
}

/**
 * Every cause, in the order reports list them. Why the request could not reuse the prefix it was
 * compared with: `fold` (a checkpoint replaced history: `compaction/summary` logged in between),
 * `prune` (a tool result was rewritten: `compaction/prune`), `fork` (a fork's first request did
 * not read its parent's last request, which it replays: its prompt departs from it, or the
 * provider reported fewer cached tokens than that prefix), `envelope` (reasoning effort,
 * temperature, stop, model, provider or the system prompt changed), `tools` (tool definitions
 * changed), `expired` (idle longer than the provider's cache TTL), `provider` (the prefix was
 * identical but the provider reported fewer cached tokens than expected: eviction, routing, lag),
 * `unknown` (the prompt changed without a logged reason); `none` when nothing broke.
 */
export const CACHE_BREAK_CAUSES = [
  'none',
  'fold',
  'prune',
  'fork',
  'envelope',
  'tools',
  'expired',
  'provider',
  'unknown',
] as const

/** One of {@link CACHE_BREAK_CAUSES}. */
export type CacheBreakCause = (typeof CACHE_BREAK_CAUSES)[number]
