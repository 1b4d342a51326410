import type { GenerateOptions } from '@warmfold/llm'
import { promptCacheKeyFor } from '@warmfold/llm'
import type { ChatMessage } from './chat-message.ts'

/** Whether to send a per-session `prompt_cache_key`. */
export type PromptCacheKeyMode = 'session' | 'off'

/** OpenAI's `prompt_cache_retention` values (openai 6.49.0 `ChatCompletionCreateParams`). */
export type PromptCacheRetention = 'in_memory' | '24h'

/** The documented values of {@link PromptCacheRetention}, for validation. */
export const PROMPT_CACHE_RETENTIONS: readonly PromptCacheRetention[] = ['in_memory', '24h']

/** The marker of an explicit breakpoint (GPT-5.6+ chat completions content parts). */
export const EXPLICIT_BREAKPOINT = Object.freeze({ mode: 'explicit' as const })

/** The cache fields one request sends, from the adapter config and the model. */
export interface CacheSettings {
  /** `session`: send `promptCacheKeyFor` (from `@warmfold/llm`) of the request's `sessionId` (none without one). */
  readonly promptCacheKey: PromptCacheKeyMode
  /** Sent as `prompt_cache_retention` when set. */
  readonly promptCacheRetention?: PromptCacheRetention
  /** Explicit breakpoints: `prompt_cache_options: {mode: 'explicit'}` plus markers (see {@link placeBreakpoints}). */
  readonly cacheBreakpoints?: boolean
}

/** The body fields the cache settings add, in wire order (after the output cap, before `stream`). */
export interface CacheFields {
  prompt_cache_key?: string
  prompt_cache_retention?: PromptCacheRetention
  prompt_cache_options?: { mode: 'explicit' }
}

/**
 * The cache fields of one request: nothing per-request but what the session determines (its
 * `cacheSessionId` when set, so a fork sends its parent's key, else its `sessionId`).
 */
export function cacheFields(
  options: Pick<GenerateOptions, 'sessionId' | 'cacheSessionId'>,
  settings: CacheSettings | undefined,
): CacheFields {
  if (!settings) return {}
  const fields: CacheFields = {}
  const cacheSession = options.cacheSessionId ?? options.sessionId
  if (settings.promptCacheKey === 'session' && cacheSession !== undefined)
    fields.prompt_cache_key = promptCacheKeyFor(cacheSession)
  if (settings.promptCacheRetention !== undefined) fields.prompt_cache_retention = settings.promptCacheRetention
  // Explicit mode: OpenAI writes no implicit breakpoint on the latest message, which for a
  // summary call would be the one-off instruction.
  if (settings.cacheBreakpoints) fields.prompt_cache_options = { mode: 'explicit' }
  return fields
}

/**
 * Marks explicit breakpoints on a copy of `messages` (the input is not modified):
 *
 * 1. the end of the static head: the system prompt (the first message, when `hasSystem`);
 * 2. the last message, leaving out the `excludeTrailing` last wire messages (a summary call's
 *    instruction), that may carry one: `system`, `user` or `tool` (assistant output parts are
 *    not among the block types OpenAI accepts a breakpoint on).
 *
 * Every `system`, `user` and `tool` message is sent as content parts (text as one `text` part),
 * marked or not, so a message's bytes differ between requests only by the marker: a string
 * and a one-part array are two renderings the cache need not treat alike.
 */
export function placeBreakpoints(
  messages: readonly ChatMessage[],
  hasSystem: boolean,
  excludeTrailing = 0,
): ChatMessage[] {
  const parts = messages.map(asParts)
  const targets = new Set<number>()
  if (hasSystem && parts[0]?.role === 'system') targets.add(0)
  for (let index = parts.length - 1 - excludeTrailing; index >= 0; index--) {
    if (parts[index]!.role !== 'assistant') {
      targets.add(index)
      break
    }
  }
  return parts.map((message, index) => (targets.has(index) ? markLastPart(message) : message))
}

function asParts(message: ChatMessage): ChatMessage {
  if (message.role === 'assistant' || typeof message.content !== 'string') return message
  return { ...message, content: [{ type: 'text', text: message.content }] } as ChatMessage
}

function markLastPart(message: ChatMessage): ChatMessage {
  if (message.role === 'assistant' || typeof message.content === 'string' || message.content.length === 0)
    return message
  const content = message.content.map((part, index, all) =>
    index === all.length - 1 ? { ...part, prompt_cache_breakpoint: EXPLICIT_BREAKPOINT } : part,
  )
  return { ...message, content } as ChatMessage
}
