import stripAnsi from 'strip-ansi'

/**
 * `text` without ANSI escape sequences (colours, cursor moves) and carriage returns: what a reader
 * sees in a terminal.
 */
export function cleanText(text: string): string {
  const plain = text.includes('\u001b') || text.includes('\u009b') ? stripAnsi(text) : text
  return plain.includes('\r') ? plain.replace(/\r\n?/g, '\n') : plain
}

/**
 * Whether UTF-16 code unit `code` is white space or a line break as a regular expression's `\s` and
 * `String.prototype.trim` take it.
 */
export function isSpaceCode(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13)
  if (code < 0xa0) return false
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  )
}

/**
 * `text` trimmed, with every run of white space (line breaks included) collapsed to one space:
 * `text.replace(/\s+/g, ' ').trim()`, by one pass over the code units that copies only what
 * changes (a lone space between words stays where it is). Every visible text of a fold goes
 * through it, at every audit.
 */
export function collapseWhitespace(text: string): string {
  let start = 0
  let end = text.length
  while (start < end && isSpaceCode(text.charCodeAt(start))) start++
  while (end > start && isSpaceCode(text.charCodeAt(end - 1))) end--
  let result = ''
  let from = start
  for (let position = start; position < end; position++) {
    const code = text.charCodeAt(position)
    if (!isSpaceCode(code)) continue
    let after = position + 1
    while (after < end && isSpaceCode(text.charCodeAt(after))) after++
    if (code !== 32 || after > position + 1) {
      result += `${text.slice(from, position)} `
      from = after
    }
    position = after - 1
  }
  return result + text.slice(from, end)
}

/**
 * `text` without the characters of `chars` (and white space, with `spaces`) it ends with: what
 * `text.replace(/[…]+$/, '')` gives, by one pass from the end (the regular expression tries every
 * start of a run that does not end the text again, so a long such run took quadratic time).
 */
export function stripTrailing(text: string, chars: string, spaces = false): string {
  let end = text.length
  for (; end > 0; end--)
    if (!chars.includes(text[end - 1]!) && !(spaces && isSpaceCode(text.charCodeAt(end - 1)))) break
  return end === text.length ? text : text.slice(0, end)
}

/** `text` without trailing sentence punctuation (`.`, `,`, `;`, `:`, `!`, `?`) and the white space before it. */
export function stripTrailingPunctuation(text: string): string {
  return stripTrailing(text, '.,;:!?', true)
}

/** At most `limit` UTF-16 code units of `text`, never ending inside a surrogate pair, trimmed. */
export function capLength(text: string, limit: number): string {
  if (text.length <= limit) return text
  let end = limit
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end).trimEnd()
}
