/**
 * A model as an adapter config's `models` table holds it, the flat shape every adapter (and the
 * scripted adapter) takes; it becomes the model's {@link ModelInfo}.
 */
export interface AdapterModelConfig {
  /** Maximum prompt + output tokens the model accepts. */
  readonly contextWindow: number
  /** Output cap of a request that sets no `maxTokens`. */
  readonly defaultMaxTokens?: number
  /** Accepted `reasoningEffort` values; omitted or empty, the model advertises no reasoning controls. */
  readonly efforts?: readonly string[]
  /** The effort `ctx.llm` materializes when a request names none; one of `efforts`. */
  readonly defaultEffort?: string
}

/** What an adapter knows about one model: its context window and default output cap as configured, and more. */
export interface ModelInfo extends Pick<AdapterModelConfig, 'contextWindow' | 'defaultMaxTokens'> {
  /** Reasoning controls, when the model reasons. */
  readonly reasoning?: {
    /** Accepted `reasoningEffort` values, e.g. `['low', 'high', 'max']`. */
    readonly efforts: readonly string[]
    /** The effort the provider applies when a request names none. */
    readonly defaultEffort?: string
    /**
     * Per effort, the output tokens the provider spends on or requires for reasoning before any
     * answer text, out of the request's output cap: Anthropic's thinking `budget_tokens`, a Gemini
     * 2.5 `thinkingBudget` (thinking counts against `maxOutputTokens`). Units: tokens, positive
     * integers.
     *
     * Invariants: keys are efforts of `efforts`; an effort without an entry (`off`, or one whose
     * reasoning has no fixed budget, like OpenAI's `reasoning_effort`) reserves nothing. A request
     * at effort `e` must set `maxTokens` above `outputReserveTokens[e]`: the provider rejects it
     * otherwise (Anthropic rejects `max_tokens` ≤ `budget_tokens`) or spends the whole cap on
     * reasoning, and the adapters refuse such a request with `INVALID_REQUEST` before sending it.
     * `maxTokens` includes the reserve, so whoever sizes an output cap (a summary call) picks one
     * above the reserve of its effort that, with the prompt, still fits `contextWindow`. Omitted
     * when no effort reserves anything.
     */
    readonly outputReserveTokens?: Readonly<Record<string, number>>
  }
  /**
   * How long the provider keeps an unused prompt prefix cached, in milliseconds (Anthropic: 5
   * minutes by default). Omitted when the adapter does not know; observers such as the cache
   * ledger then use their own per-provider default.
   */
  readonly cacheTtlMs?: number
  /**
   * What the provider bills for cached prompt tokens, each as a multiple of the price of one
   * uncached prompt token: `read`, a token read from the cache (Anthropic, OpenAI: 0.1;
   * DeepSeek: about 0.02), and `write`, a token written to it (1 where writes are billed as
   * plain input; Anthropic 1.25 for 5-minute entries, 2 for 1-hour ones). Omitted when the
   * adapter does not know; the compaction engine then assumes `{ read: 0.1, write: 1.25 }`, the
   * dearest common case for a rewrite of cached history. Both finite and ≥ 0.
   */
  readonly cachePrices?: CachePrices
}

/** Cache prices relative to one uncached prompt token (see {@link ModelInfo.cachePrices}). */
export interface CachePrices {
  /** A prompt token read from the cache. */
  readonly read: number
  /** A prompt token written to the cache. */
  readonly write: number
}
