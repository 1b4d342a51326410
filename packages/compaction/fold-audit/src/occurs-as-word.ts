/** Whether UTF-16 code unit `code` is a word character (`[A-Za-z0-9_]`). */
export function isWordCode(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
}

/**
 * Whether `text` holds `pattern` somewhere no word character continues it on a side where the
 * pattern begins or ends with one: `a.ts` is not in `data.ts`, nor `5ms` in `15ms`, but
 * `src/a.ts` is in `/app/src/a.ts:12`. One `indexOf` loop, so a search for a fold's few hundred
 * artifacts is linear in the text times the artifacts; the fold around it waits seconds for its
 * summary call.
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
