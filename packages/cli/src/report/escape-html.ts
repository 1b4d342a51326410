const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/**
 * `text` safe inside HTML or SVG text and inside a quoted attribute value: every string that comes
 * from a session log goes through this, so a log cannot add markup or scripts to a report.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] as string)
}

/** A class-name suffix for a word from the log: itself when it is plain lowercase, else `other`. */
export function classWord(word: string): string {
  return /^[a-z][a-z0-9-]{0,31}$/.test(word) ? word : 'other'
}
