import type { RecordedRequest } from '@warmfold/test-utils'

/** What a summary request showed the summarizer of the tools' output (Chat Completions bodies). */
export interface SummarizerView {
  /** Characters of tool output in `tool` messages (a replayed history). */
  readonly toolMessageChars: number
  /** Characters of tool output inside `<conversation>` transcripts (`[Tool result]:` entries). */
  readonly transcriptToolChars: number
  /** How many tool outputs, in either form. */
  readonly toolOutputs: number
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((part) => (typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : ''))
    .join('')
}

/** A transcript line that opens a message (pi, opencode): `[User]:`, `[Tool result]:`, … (opencode: no blank line before a result). */
const ENTRY = /\n\[(?:user|assistant|tool|system)[^\]\n]{0,40}\]:/gi

/** The `[Tool result]:` entries of the `<conversation>` blocks in `text`, each to the next entry. */
export function transcriptToolResults(text: string): string[] {
  const results: string[] = []
  for (const block of text.matchAll(/<conversation>([\s\S]*?)<\/conversation>/g)) {
    const transcript = `\n${block[1] ?? ''}`
    const starts = [...transcript.matchAll(ENTRY)]
    starts.forEach((start, index) => {
      if (!/^\n\[tool result/i.test(start[0])) return
      const end = starts[index + 1]?.index ?? transcript.length
      results.push(transcript.slice((start.index ?? 0) + start[0].length, end).trim())
    })
  }
  return results
}

/** The tool output a Chat Completions summary request carries, as messages and as transcript text. */
export function summarizerView(request: RecordedRequest): SummarizerView {
  const body = request.json as { messages?: Array<{ role?: string; content?: unknown }> }
  let toolMessageChars = 0
  let transcriptToolChars = 0
  let toolOutputs = 0
  for (const message of body.messages ?? []) {
    const text = textOf(message.content)
    if (message.role === 'tool') {
      toolMessageChars += text.length
      toolOutputs++
      continue
    }
    for (const result of transcriptToolResults(text)) {
      transcriptToolChars += result.length
      toolOutputs++
    }
  }
  return { toolMessageChars, transcriptToolChars, toolOutputs }
}

/** One line for the README: what the summarizer saw of the tools' output. */
export function describeSummarizerView(mode: string, index: number, view: SummarizerView): string {
  return (
    `${mode}: summary ${index} shows the summarizer ${view.toolOutputs} tool outputs: ` +
    `${view.toolMessageChars} chars in tool messages, ${view.transcriptToolChars} chars in its transcript`
  )
}
