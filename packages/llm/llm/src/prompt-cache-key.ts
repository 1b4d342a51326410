import { createHash } from 'node:crypto'

/** Prefix of every derived key: names its origin in a provider's dashboards, carries no user data. */
export const PROMPT_CACHE_KEY_PREFIX = 'warmfold-'

/** OpenAI rejects a longer `prompt_cache_key` (`string_above_max_length`, "maximum length 64"). */
export const PROMPT_CACHE_KEY_MAX_LENGTH = 64

/**
 * The routing key of a session's prompt cache (OpenAI's `prompt_cache_key`, in the chat and
 * Responses adapters and through the AI SDK): {@link PROMPT_CACHE_KEY_PREFIX} plus the first 32
 * hex digits of the SHA-256 of the session id (41 characters, under
 * {@link PROMPT_CACHE_KEY_MAX_LENGTH}). The same session always gets the same key, so its
 * conversation and summary requests are routed to the same cache, and the id itself (which may
 * hold a user name or a path) never leaves the host. Every adapter derives it here, so a host
 * that switches adapters keeps its routing.
 */
export function promptCacheKeyFor(sessionId: string): string {
  return `${PROMPT_CACHE_KEY_PREFIX}${createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}`
}
