import type { CallConfig } from './call-config.ts'
import type { JsonObject } from './json-value.ts'
import type { Message } from './message.ts'

/**
 * A tool as the model sees it. `parameters` is a JSON Schema object; it is serialized with
 * `canonicalJson`, so key order never changes the prompt.
 */
export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly parameters: JsonObject
}

/** Why a request is sent. `conversation` is the agent loop; `compaction` a summary call. */
export type RequestPurpose = 'conversation' | 'compaction' | (string & {})

/** Everything one LLM call needs. */
export interface GenerateOptions extends CallConfig {
  /** The conversation, oldest first. */
  readonly messages: readonly Message[]
  /** The system prompt, sent before all messages. */
  readonly system?: string
  /** Tools the model may call, in a stable order. */
  readonly tools?: readonly ToolDefinition[]
  /** What the call is for; observers (telemetry, the cache simulator) group by it. */
  readonly purpose?: RequestPurpose
  /** The session the call belongs to, for attribution only (never prompt bytes). */
  readonly sessionId?: string
  /**
   * The session whose prompt cache this call should read, when it is not `sessionId`'s own: a
   * fork sets its parent's, so adapters that route by session (OpenAI's `prompt_cache_key`)
   * send the parent's key and the fork lands on the parent's cache. Never prompt bytes.
   */
  readonly cacheSessionId?: string
  /**
   * `short`: write what this call adds to the cache with the provider's shortest lifetime, where
   * the provider has tiers (Anthropic: 5 minutes instead of a model's 1 hour). A one-shot fork
   * sets it: nothing reads its entries once it has ended. Absent: the adapter's configured
   * lifetime. What the call reads is unaffected. Never prompt bytes.
   */
  readonly cacheTtl?: 'short'
  /** Cancels the call. */
  readonly signal?: AbortSignal
}
