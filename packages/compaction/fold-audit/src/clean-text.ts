import stripAnsi from 'strip-ansi'

/** `text` without ANSI escape sequences (colours, cursor moves) and carriage returns: what a reader sees in a terminal. */
export function cleanText(text: string): string {
  const plain = text.includes('\u001b') || text.includes('\u009b') ? stripAnsi(text) : text
  return plain.includes('\r') ? plain.replace(/\r\n?/g, '\n') : plain
}

/** `text` trimmed, with every run of white space (line breaks included) collapsed to one space. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/** `text` without trailing sentence punctuation (`.`, `,`, `;`, `:`, `!`, `?`) and the white space before it. */
export function stripTrailingPunctuation(text: string): string {
  return text.replace(/[\s.,;:!?]+$/, '')
}

/** At most `limit` UTF-16 code units of `text`, never ending inside a surrogate pair, trimmed. */
export function capLength(text: string, limit: number): string {
  if (text.length <= limit) return text
  let end = limit
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end).trimEnd()
}
