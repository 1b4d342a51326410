import { isRecord } from '@warmfold/cache-ledger/prefix'

/**
 * Gemini CLI keeps its function-call ids as `NAME__ID` in its history and strips the `NAME__`
 * prefix on the conversation path (`stripToolCallIdPrefixes`, which also rebuilds the part as
 * `{ name, args, id }` / `{ name, response, id }`), but its compression call sends the history
 * unstripped. So a summary request's history differs from the conversation request it repeats in
 * every function-call id. This undoes it the same way: the contents as the conversation path
 * would have sent them. Returns `contents` itself when no id carries the prefix.
 */
export function withoutCallIdPrefixes(contents: readonly unknown[]): readonly unknown[] {
  if (!contents.some(hasPrefixedId)) return contents
  return contents.map((content) => {
    if (!isRecord(content) || !Array.isArray(content.parts) || !hasPrefixedId(content)) return content
    return { ...content, parts: content.parts.map(stripPart) }
  })
}

function hasPrefixedId(content: unknown): boolean {
  if (!isRecord(content) || !Array.isArray(content.parts)) return false
  return content.parts.some((part) => stripPart(part) !== part)
}

function stripPart(part: unknown): unknown {
  if (!isRecord(part)) return part
  const call = part.functionCall
  const callId = bareId(call)
  if (isRecord(call) && callId !== undefined)
    return { ...part, functionCall: { name: call.name, args: call.args, id: callId } }
  const response = part.functionResponse
  const responseId = bareId(response)
  if (isRecord(response) && responseId !== undefined)
    return { ...part, functionResponse: { name: response.name, response: response.response, id: responseId } }
  return part
}

/** A call's (or response's) `id` without its `NAME__` prefix; undefined when it carries none. */
function bareId(call: unknown): string | undefined {
  if (!isRecord(call) || typeof call.id !== 'string') return undefined
  const name = typeof call.name === 'string' ? call.name.trim() : ''
  const prefix = `${name === '' ? 'generic_tool' : name}__`
  return call.id.startsWith(prefix) ? call.id.slice(prefix.length) : undefined
}

/** Part keys that differ between Gemini CLI's conversation path and its compression call, never the content. */
const PART_NOISE = ['thoughtSignature', 'thought_signature']

/**
 * Gemini contents in a form that compares equal across Gemini CLI's two paths: function-call and
 * function-response ids removed (the conversation path sends `functionCall.id` bare and
 * `functionResponse` without one; the compression call sends both as `NAME__ID`) and thought
 * signatures removed (the conversation path adds them to function-call parts). What a content
 * says (text, call name and arguments, response) is kept, so matching on this is matching on content.
 */
export function comparableGeminiContents(contents: readonly unknown[]): readonly unknown[] {
  return contents.map((content) => {
    if (!isRecord(content) || !Array.isArray(content.parts)) return content
    const parts = content.parts.map((part) => {
      if (!isRecord(part)) return part
      const copy: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(part)) {
        if (PART_NOISE.includes(key)) continue
        copy[key] = (key === 'functionCall' || key === 'functionResponse') && isRecord(value) ? withoutId(value) : value
      }
      return copy
    })
    return { ...content, parts }
  })
}

function withoutId(call: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { id: _id, ...rest } = call
  return rest
}
