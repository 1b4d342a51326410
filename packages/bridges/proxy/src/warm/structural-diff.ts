import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { wireViewOf } from './wire-view.ts'

/** How the rewritten message list was made, for its diff line. */
export interface MessagesChange {
  /** Messages of the conversation request replayed (its whole list). */
  readonly replayed: number
  /** Messages of the summary request kept after them (its history beyond the conversation). */
  readonly kept: number
  /** Messages of the summary request that the replay stands for. */
  readonly replaced: number
  readonly placement: 'new-message' | 'inside-last'
  readonly instructionChars: number
  /** Characters of the transcript the replay stands for (transcript agents). */
  readonly transcriptChars?: number
  /** Set when the request extends a rewrite: `replayed` counts that rewrite's messages. */
  readonly extendsRewrite?: boolean
}

const SYSTEM_KEYS = ['system', 'instructions', 'systemInstruction', 'system_instruction']

/**
 * A structural diff of a summary request and its warm rewrite, one line per change: the system
 * prompt, the tools, every other top-level setting that differs (raw key, old → new), then the messages.
 */
export function structuralDiff(
  api: RequestApi,
  original: Readonly<Record<string, unknown>>,
  rewritten: Readonly<Record<string, unknown>>,
  messages: MessagesChange,
  notes: readonly string[] = [],
): string[] {
  const before = wireViewOf(api, original)
  const after = wireViewOf(api, rewritten)
  const lines: string[] = []
  if (before.systemText !== after.systemText) {
    const moved =
      before.systemText === ''
        ? ''
        : `; the summarizer's (${before.systemText.length} chars) moved into the final user message`
    lines.push(
      after.systemText === ''
        ? `system: none, as in the conversation${moved}`
        : `system: restored the conversation's system prompt (${after.systemText.length} chars)${moved}`,
    )
  }
  if (before.toolCount !== after.toolCount)
    lines.push(
      before.toolCount === 0
        ? `tools: restored ${after.toolCount} tools`
        : `tools: ${before.toolCount} → ${after.toolCount} tools (the conversation's)`,
    )
  else if (JSON.stringify(original.tools) !== JSON.stringify(rewritten.tools))
    lines.push(`tools: the conversation's ${after.toolCount} tools in place of the summary request's`)
  const skip = new Set([before.listKey, 'tools', ...SYSTEM_KEYS])
  const keys = new Set([...Object.keys(original), ...Object.keys(rewritten)])
  for (const key of keys) {
    // A setting adjusted for validity is named by its note instead.
    if (skip.has(key) || notes.some((note) => note.startsWith(`${key}:`))) continue
    const from = JSON.stringify(original[key])
    const to = JSON.stringify(rewritten[key])
    if (from !== to) lines.push(`${key}: ${short(from)} → ${short(to)}`)
  }
  lines.push(...notes, messagesLine(before.listKey, messages))
  return lines
}

function messagesLine(listKey: string, change: MessagesChange): string {
  const where =
    change.placement === 'inside-last'
      ? 'inside the last user message, after its tool results'
      : 'as a new user message'
  const stood =
    change.transcriptChars === undefined
      ? `in place of the summary request's ${change.replaced}`
      : `in place of its transcript (${change.transcriptChars} chars)`
  const kept = change.kept ? `, kept ${change.kept} more of the summary request after them` : ''
  if (change.extendsRewrite)
    return (
      `${listKey}: replayed the rewritten summary request (${change.replayed}) in place of the original's history, ` +
      `kept the model's answer, appended the instruction (${change.instructionChars} chars) ${where}`
    )
  return (
    `${listKey}: replayed the conversation's ${change.replayed} ${stood}${kept}, ` +
    `appended the instruction (${change.instructionChars} chars) ${where}`
  )
}

function short(json: string | undefined): string {
  if (json === undefined) return 'absent'
  return json.length <= 40 ? json : `(${json.length} chars)`
}
