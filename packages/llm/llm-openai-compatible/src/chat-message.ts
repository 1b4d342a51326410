// The wire shapes of chat completions messages and tools. Serialization builds them and the
// cache controls mark them; this file imports neither, so the two never import each other.
import type { JsonObject } from '@warmfold/llm'

/** A text content part; `prompt_cache_breakpoint` marks an explicit cache breakpoint (GPT-5.6+). */
export interface ChatTextPart {
  type: 'text'
  text: string
  prompt_cache_breakpoint?: { mode: 'explicit' }
}

/** A content part of a user message with images. */
export type ChatContentPart =
  | ChatTextPart
  | { type: 'image_url'; image_url: { url: string }; prompt_cache_breakpoint?: { mode: 'explicit' } }

/** One tool call as replayed on an assistant message. */
export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** One element of the wire `messages` array. */
export type ChatMessage =
  | { role: 'system'; content: string | ChatTextPart[] }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; reasoning_content?: string; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string | ChatTextPart[] }

/** One tool as the server sees it. */
export interface ChatTool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonObject }
}
