/** The guard every rewritten summary request carries: the conversation's tools are back, so say it. */
export const TEXT_ONLY_GUARD = 'Respond with TEXT ONLY. Do not call any tools.'

/** What the final user message of a rewritten summary request says. */
export interface SummaryInstruction {
  /** The known agent's id. */
  readonly agent: string
  /** The summarizer system prompt the agent sent in place of the conversation's, if it replaced it. */
  readonly summarizerSystem?: string
  /** The agent's own instruction, verbatim. */
  readonly instruction: string
  /** For a transcript agent: what its transcript holds after the replayed history (the last answer). */
  readonly since?: string
}

/**
 * The agent's summarization text as one user message: its summarizer system prompt (if it replaced
 * the system) and its instruction, verbatim inside tags, between two text-only guards. The
 * conversation above it is the real one, so the summarizer reads it as history to summarize.
 */
export function wrapInstruction(instruction: SummaryInstruction): string {
  const parts = [
    TEXT_ONLY_GUARD,
    'The conversation above is to be summarized now: it is history to summarize, not a task to continue. ' +
      'The summarizer instructions below are verbatim.',
  ]
  if (instruction.summarizerSystem !== undefined && instruction.summarizerSystem.trim() !== '')
    parts.push(`<summarizer_system_prompt>\n${instruction.summarizerSystem.trim()}\n</summarizer_system_prompt>`)
  if (instruction.since !== undefined && instruction.since.trim() !== '')
    parts.push(`<conversation_since>\n${instruction.since.trim()}\n</conversation_since>`)
  parts.push(`<summary_instruction>\n${instruction.instruction.trim()}\n</summary_instruction>`, TEXT_ONLY_GUARD)
  return parts.join('\n\n')
}

/** A transcript agent's user message split into its transcript and its instruction. */
export interface TranscriptParts {
  readonly transcript: string
  /** The message without the transcript block (and without opencode's "Here is the conversation so far:"). */
  readonly instruction: string
}

const OPEN = '<conversation>'
const CLOSE = '</conversation>'

/** Splits `text` at its `<conversation>…</conversation>` block; undefined when it has none. */
export function splitTranscript(text: string): TranscriptParts | undefined {
  const open = text.indexOf(OPEN)
  const close = text.lastIndexOf(CLOSE)
  if (open === -1 || close < open) return undefined
  const before = text.slice(0, open).replace(/Here is the conversation so far:\s*$/, '')
  const instruction = `${before.trim()}\n\n${text.slice(close + CLOSE.length).trim()}`.trim()
  return { transcript: text.slice(open + OPEN.length, close), instruction }
}

/**
 * Where the transcript stops repeating `snippets` (texts of the replayed history, in order):
 * the index after the last one found in order, or -1 when the first is not found (it does not
 * transcribe that history). Each snippet is looked for after the previous one.
 */
export function transcribedUpTo(transcript: string, snippets: readonly string[]): number {
  let at = 0
  let found = 0
  for (const snippet of snippets) {
    const index = transcript.indexOf(snippet, at)
    if (index === -1) continue
    at = index + snippet.length
    found++
  }
  return found === 0 || found < Math.ceil(snippets.length / 2) ? -1 : at
}

/** A transcript line that opens a message: `[User]:`, `[Assistant tool calls]:`, `[Tool result]:` (pi, opencode). */
const SPEAKER = /\n\n\[(?:user|assistant|tool|system)[^\]\n]{0,40}\]:/gi

/**
 * What the transcript holds after `index` (the messages after the replayed ones): from the next
 * line that opens a message on; nothing when no message follows (the rest of the last replayed
 * message, e.g. pi's "[... 10130 more characters truncated]" after a cut tool result, is not new).
 */
export function transcriptTail(transcript: string, index: number): string {
  SPEAKER.lastIndex = index
  const speaker = SPEAKER.exec(transcript)
  return speaker ? transcript.slice(speaker.index).trim() : ''
}
