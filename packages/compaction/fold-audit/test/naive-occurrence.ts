const isWord = (character: string | undefined): boolean => character !== undefined && /\w/.test(character)

/**
 * The definition the word search must agree with: some occurrence not glued to a word character
 * where the pattern begins or ends with one.
 */
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
