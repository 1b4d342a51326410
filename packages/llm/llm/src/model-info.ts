/** What an adapter knows about one model. */
export interface ModelInfo {
  /** Maximum prompt + output tokens the model accepts. */
  readonly contextWindow: number
  /** Output cap the adapter uses when a request omits `maxTokens`. */
  readonly defaultMaxTokens?: number
  /** Reasoning controls, when the model reasons. */
  readonly reasoning?: {
    /** Accepted `reasoningEffort` values, e.g. `['low', 'high', 'max']`. */
    readonly efforts: readonly string[]
    /** The effort the provider applies when a request names none. */
    readonly defaultEffort?: string
  }
  /**
   * How long the provider keeps an unused prompt prefix cached, in milliseconds (Anthropic: 5
   * minutes by default). Omitted when the adapter does not know; observers such as the cache
   * ledger then use their own per-provider default.
   */
  readonly cacheTtlMs?: number
}
