import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { isRecord } from '@warmfold/cache-ledger/prefix'
import { listKeyOf } from './wire-view.ts'

/** What a warm summary request is made of. */
export interface WarmRequestParts {
  readonly api: RequestApi
  /** The remembered conversation request's body: the prefix, kept whole and in its key order. */
  readonly conversation: Readonly<Record<string, unknown>>
  /** Messages to append after the conversation's (the summary's history beyond it), in wire form. */
  readonly extra: readonly unknown[]
  /** The final user text (see `wrapInstruction`). */
  readonly text: string
  /** The summary request's body: its output settings are kept (the agent gets the answer it asked for). */
  readonly summary: Readonly<Record<string, unknown>>
}

/** A warm summary request body and how it was made. */
export interface WarmRequest {
  readonly json: Record<string, unknown>
  /** `inside-last`: the text went into the trailing user message, after its tool results. */
  readonly placement: 'new-message' | 'inside-last'
  /** Output settings adjusted for validity (one line each, for the diff). */
  readonly notes: readonly string[]
}

/**
 * Settings that shape the answer, not the prompt: they follow the summary request (taken from it
 * when it has them, dropped when it has not), so the agent gets the answer in the shape it asked for.
 */
export const OUTPUT_KEYS: Readonly<Record<RequestApi, readonly string[]>> = {
  'openai-chat': ['max_tokens', 'max_completion_tokens', 'stream', 'stream_options'],
  'openai-responses': ['max_output_tokens', 'stream', 'stream_options'],
  'anthropic-messages': ['max_tokens', 'stream'],
  gemini: [],
}

/**
 * The conversation request with `extra` and the text appended, every other key as it was and in
 * its order (JSON.stringify of the result repeats the conversation's JSON up to the end of its
 * message list), output settings from the summary request. Anthropic: the text goes inside a
 * trailing user message after its `tool_result` blocks (pairing), `max_tokens` stays above the
 * thinking budget, `tool_choice` and thinking blocks untouched. Gemini: inside a trailing user turn
 * after its `functionResponse` parts, else a user turn of its own. Chat and Responses: one new user message.
 */
export function buildWarmRequest(parts: WarmRequestParts): WarmRequest {
  const { api, conversation, summary } = parts
  const listKey = listKeyOf(api)
  const own = conversation[listKey]
  const items = [...(Array.isArray(own) ? own : [{ role: 'user', content: own }]), ...parts.extra]
  const inside = appendInside(api, items.at(-1), parts.text)
  if (inside) items[items.length - 1] = inside
  else items.push(USER_MESSAGE[api](parts.text))
  const outputKeys = OUTPUT_KEYS[api]
  const json: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(conversation)) {
    if (key === listKey) json[key] = items
    else if (!outputKeys.includes(key)) json[key] = value
    else if (summary[key] !== undefined) json[key] = summary[key]
  }
  for (const key of outputKeys) if (!(key in json) && summary[key] !== undefined) json[key] = summary[key]
  const notes: string[] = []
  if (api === 'anthropic-messages') keepAboveThinkingBudget(json, notes)
  if (api === 'gemini') keepOutputBudget(json, summary, notes)
  return { json, placement: inside ? 'inside-last' : 'new-message', notes }
}

/** A user message of each API holding `text`. */
const USER_MESSAGE: Readonly<Record<RequestApi, (text: string) => Record<string, unknown>>> = {
  'openai-chat': (text) => ({ role: 'user', content: text }),
  'openai-responses': (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }),
  'anthropic-messages': (text) => ({ role: 'user', content: [{ type: 'text', text }] }),
  gemini: (text) => ({ role: 'user', parts: [{ text }] }),
}

/** The trailing user message with the text appended after its tool results, or undefined. */
function appendInside(api: RequestApi, last: unknown, text: string): Record<string, unknown> | undefined {
  if (!isRecord(last)) return undefined
  if (api === 'anthropic-messages' && last.role === 'user' && Array.isArray(last.content)) {
    const results = last.content.some((block) => isRecord(block) && block.type === 'tool_result')
    return results ? { ...last, content: [...last.content, { type: 'text', text }] } : undefined
  }
  if (api === 'gemini' && (last.role === undefined || last.role === 'user') && Array.isArray(last.parts)) {
    const responses = last.parts.some((part) => isRecord(part) && part.functionResponse !== undefined)
    return responses ? { ...last, parts: [...last.parts, { text }] } : undefined
  }
  return undefined
}

/** Anthropic rejects `max_tokens` at or below `thinking.budget_tokens`: raise it above. */
function keepAboveThinkingBudget(json: Record<string, unknown>, notes: string[]): void {
  const thinking = json.thinking
  if (!isRecord(thinking) || typeof thinking.budget_tokens !== 'number') return
  const budget = thinking.budget_tokens
  const asked = typeof json.max_tokens === 'number' ? json.max_tokens : 0
  if (asked > budget) return
  json.max_tokens = budget + Math.max(asked, 1024)
  notes.push(`max_tokens: ${asked} → ${json.max_tokens as number} (above the thinking budget of ${budget})`)
}

/** Gemini: the summary's own `generationConfig.maxOutputTokens`, set in the conversation's config. */
function keepOutputBudget(
  json: Record<string, unknown>,
  summary: Readonly<Record<string, unknown>>,
  notes: string[],
): void {
  const asked = isRecord(summary.generationConfig) ? summary.generationConfig.maxOutputTokens : undefined
  if (typeof asked !== 'number' || !isRecord(json.generationConfig)) return
  if (json.generationConfig.maxOutputTokens === asked) return
  notes.push(`generationConfig.maxOutputTokens: ${String(json.generationConfig.maxOutputTokens)} → ${asked}`)
  json.generationConfig = { ...json.generationConfig, maxOutputTokens: asked }
}
