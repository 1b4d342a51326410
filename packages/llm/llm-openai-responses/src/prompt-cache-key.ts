import { createHash } from 'node:crypto'

/** Longest accepted key prefix: with `-` and the 32-character hash the key stays within OpenAI's 64 characters. */
export const MAX_PROMPT_CACHE_KEY_PREFIX = 24

/**
 * The `prompt_cache_key` of a session: `<prefix>-<first 32 hex digits of sha256(sessionId)>`.
 * OpenAI routes a request by a hash of the prompt's start combined with this key, so one key per
 * session keeps a session on the machine that holds its prefix even when many sessions share a
 * system prompt. The session id is hashed because a host may build it from user data; the same
 * id always gives the same key, so every request of a session (summary calls included) carries
 * the same bytes. Returns `undefined` without a session id.
 */
export function promptCacheKey(sessionId: string | undefined, prefix: string): string | undefined {
  if (sessionId === undefined) return undefined
  return `${prefix}-${createHash('sha256').update(sessionId, 'utf8').digest('hex').slice(0, 32)}`
}
