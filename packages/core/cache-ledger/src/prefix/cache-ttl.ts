/**
 * Cache TTLs the ledger assumes per provider id when a model's `ModelInfo` has no `cacheTtlMs`
 * and the config names none: Anthropic keeps a prefix 5 minutes after its last use (the default
 * `ephemeral` cache); OpenAI keeps it in memory for 5 to 10 minutes of inactivity, read as 5;
 * DeepSeek clears unused cache "within a few hours to a few days", read as 3 hours. Any other
 * provider is never judged expired.
 */
export const DEFAULT_CACHE_TTL_MS: Readonly<Record<string, number>> = Object.freeze({
  anthropic: 5 * 60_000,
  openai: 5 * 60_000,
  deepseek: 3 * 60 * 60_000,
})
