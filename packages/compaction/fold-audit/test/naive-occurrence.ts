const isWord = (character: string | undefined): boolean => character !== undefined && /\w/.test(character)

/** The definition every matcher must agree with: some occurrence not glued to a word character where the pattern begins or ends with one. */
export function naiveOccurs(pattern: string, text: string): boolean {
  if (pattern === '') return false
  for (let start = text.indexOf(pattern); start >= 0; start = text.indexOf(pattern, start + 1)) {
    const end = start + pattern.length
    if (isWord(pattern[0]) && isWord(text[start - 1])) continue
    if (isWord(pattern.at(-1)) && isWord(text[end])) continue
    return true
  }
  return false
}

/** Which of `patterns` a matcher built from them finds in `text`, one flag per pattern. */
export function foundBy(
  matcher: new (patterns: readonly string[]) => { markFound(text: string, found: Uint8Array): void },
  patterns: readonly string[],
  text: string,
): boolean[] {
  const flags = new Uint8Array(patterns.length)
  new matcher(patterns).markFound(text, flags)
  return [...flags].map(Boolean)
}
