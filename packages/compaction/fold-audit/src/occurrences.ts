import { MultiPatternMatcher } from './multi-pattern-matcher.ts'
import { occursAsWord } from './occurs-as-word.ts'

/** Up to this many patterns, `indexOf` per pattern is faster than building an automaton and passing it over the text. */
export const FEW_PATTERNS = 32

/**
 * Which of `patterns` occur in `text` as `occursAsWord` counts an occurrence (not glued to a
 * word character where the pattern begins or ends with one): one `indexOf` each for a few
 * patterns, one pass of a {@link MultiPatternMatcher} for more.
 */
export function occurrences(text: string, patterns: readonly string[]): Uint8Array {
  const found = new Uint8Array(patterns.length)
  if (patterns.length > FEW_PATTERNS) new MultiPatternMatcher(patterns).markFound(text, found)
  else for (let index = 0; index < patterns.length; index++) if (occursAsWord(text, patterns[index]!)) found[index] = 1
  return found
}
