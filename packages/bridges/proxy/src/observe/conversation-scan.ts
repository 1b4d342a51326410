import type { CanonicalRequest, RequestApi } from '@warmfold/cache-ledger/prefix'
import { canonicalize, canonicalWireJson, RequestShapeError } from '@warmfold/cache-ledger/prefix'
import type { RememberedRequest } from '../proxy-exchange.ts'
import { comparableGeminiContents } from '../warm/gemini-call-ids.ts'
import type { RecalledConversation } from './recalled-conversations.ts'

/** `body` canonicalized as `api` reads it; undefined when it is not a body of `api`. */
export function canonicalOf(api: RequestApi, body: Readonly<Record<string, unknown>>): CanonicalRequest | undefined {
  try {
    return canonicalize({ body, headers: {} }, api)
  } catch (error) {
    if (error instanceof RequestShapeError) return undefined
    throw error
  }
}

/**
 * The canonical messages of `json` (system head left out), each as canonical wire JSON; Gemini
 * contents as `comparableGeminiContents` makes them (call ids and thought signatures removed, which
 * Gemini CLI writes differently on its conversation path and in its compression call). Undefined
 * when `json` is not a body of `api`.
 */
function comparableMessages(api: RequestApi, json: Readonly<Record<string, unknown>>): string[] | undefined {
  const body =
    api === 'gemini' && Array.isArray(json.contents)
      ? { ...json, contents: comparableGeminiContents(json.contents) }
      : json
  return canonicalOf(api, body)?.messages.map((message) => canonicalWireJson(message.value))
}

function startsWith(list: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= list.length && prefix.every((item, index) => item === list[index])
}

/**
 * What the prompt trie cannot answer: among `candidates` (each session's last conversation
 * request, of `api`, within the TTL), the one whose comparable messages are the longest prefix of
 * `json`'s messages but the last (the latest on a tie); else, with at least two such messages, the
 * latest one of which they are themselves a prefix (Gemini CLI summarizes only the older ~70 % of
 * its history). Reads every candidate's body: asked only for a summary request the trie missed.
 */
export function scanConversations(
  api: RequestApi,
  json: Readonly<Record<string, unknown>>,
  candidates: readonly RecalledConversation[],
): RememberedRequest | undefined {
  const mine = comparableMessages(api, json)?.slice(0, -1)
  if (!mine || mine.length === 0) return undefined
  const held = candidates
    .toSorted((left, right) => left.at - right.at)
    .map((entry) => ({ entry, messages: comparableMessages(api, entry.remembered.json) ?? [] }))
  let best: (typeof candidates)[number] | undefined
  let bestLength = 0
  for (const { entry, messages } of held)
    if (messages.length > 0 && messages.length >= bestLength && startsWith(mine, messages)) {
      best = entry
      bestLength = messages.length
    }
  if (best) return best.remembered
  if (mine.length < 2) return undefined
  return held.findLast(({ messages }) => messages.length > mine.length && startsWith(messages, mine))?.entry.remembered
}
