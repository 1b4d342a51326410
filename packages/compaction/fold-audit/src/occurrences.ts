import { MultiPatternMatcher } from './multi-pattern-matcher.ts'
import { occursAsWord } from './occurs-as-word.ts'
import { WordAnchorMatcher } from './word-anchor-matcher.ts'

/** Up to this many patterns, `indexOf` per pattern is faster than a pass over the text's words (on a fold's 23,000 characters, twice as fast at 32 patterns and as fast at 64). */
export const FEW_PATTERNS = 32

/**
 * A search for `patterns` in any text, as `occursAsWord` counts an occurrence (not glued to a
 * word character where the pattern begins or ends with one): one `indexOf` each for a few
 * patterns, else one pass over each text's words with a {@link WordAnchorMatcher}, or, when one
 * of its anchor words would stand for too many patterns, with a {@link MultiPatternMatcher}
 * (Aho–Corasick); either is built once for every text searched.
 * The search returns one flag per pattern, by index.
 */
export function occurrenceFinder(patterns: readonly string[]): (text: string) => Uint8Array {
  if (patterns.length > FEW_PATTERNS) {
    const anchored = new WordAnchorMatcher(patterns)
    const matcher = anchored.linear ? anchored : new MultiPatternMatcher(patterns)
    return (text) => {
      const found = new Uint8Array(patterns.length)
      matcher.markFound(text, found)
      return found
    }
  }
  return (text) => {
    const found = new Uint8Array(patterns.length)
    for (let index = 0; index < patterns.length; index++) if (occursAsWord(text, patterns[index]!)) found[index] = 1
    return found
  }
}
