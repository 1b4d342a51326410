/** Whether UTF-16 code unit `code` is a word character (`[A-Za-z0-9_]`). */
export function isWordCode(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
}

/**
 * Whether `text` holds `pattern` somewhere no word character continues it on a side where the
 * pattern begins or ends with one (so `a.ts` is not in `data.ts`), as `MultiPatternMatcher`
 * counts an occurrence. For a few patterns `indexOf` is faster than building an automaton.
 */
export function occursAsWord(text: string, pattern: string): boolean {
  if (pattern === '') return false
  const start = isWordCode(pattern.charCodeAt(0))
  const end = isWordCode(pattern.charCodeAt(pattern.length - 1))
  for (let at = text.indexOf(pattern); at >= 0; at = text.indexOf(pattern, at + 1)) {
    if (start && at > 0 && isWordCode(text.charCodeAt(at - 1))) continue
    const after = at + pattern.length
    if (end && after < text.length && isWordCode(text.charCodeAt(after))) continue
    return true
  }
  return false
}
