import { isWordCode, occursAsWord } from './occurs-as-word.ts'

/** The most patterns one anchor word may stand for: past it, {@link WordAnchorMatcher.linear} is false. */
export const MAX_PATTERNS_PER_ANCHOR = 16

/** 1 for each code unit below 128 that is a word character (`isWordCode`): one load in the loops over every character, with no call. */
const WORD_CODES = new Uint8Array(128).map((_, code) => (isWordCode(code) ? 1 : 0))

/** The hash of an empty word: each of its code units is folded in by {@link nextHash} (FNV-1a). */
const HASH_SEED = 0x811c9dc5 | 0

function nextHash(hash: number, code: number): number {
  return Math.imul(hash ^ code, 0x01000193)
}

/** A word's key from its hash and length, never 0 (an empty slot of a {@link KeyTable}). Collisions cost a comparison, never a wrong answer. */
function wordKey(hash: number, length: number): number {
  return ((hash ^ length) & 0x3fffffff) | 1
}

/**
 * An open-addressing table of word keys, at most half full: a map from key to slot that is a
 * few typed-array loads a look-up, where a `Map` of numbers costs a hash and a call.
 */
class KeyTable {
  readonly keys: Int32Array
  private readonly mask: number

  constructor(entries: number) {
    let size = 16
    while (size < entries * 2) size *= 2
    this.keys = new Int32Array(size)
    this.mask = size - 1
  }

  /** The slot of `key`, or -1 when the table does not hold it. */
  find(key: number): number {
    const { keys, mask } = this
    for (let slot = key & mask; ; slot = (slot + 1) & mask) {
      const at = keys[slot]!
      if (at === key) return slot
      if (at === 0) return -1
    }
  }

  /** The slot of `key`, taken for it when the table did not hold it. */
  slot(key: number): number {
    const { keys, mask } = this
    for (let slot = key & mask; ; slot = (slot + 1) & mask) {
      const at = keys[slot]!
      if (at === key) return slot
      if (at === 0) {
        keys[slot] = key
        return slot
      }
    }
  }
}

/**
 * Finds which of many patterns occur in a text, as `occursAsWord` counts an occurrence (not glued
 * to a word character where the pattern begins or ends with one), with next to no set-up: each
 * pattern is looked up by one of its words, its anchor, and checked in full only where the text
 * holds that word.
 *
 * This is sound because of how an occurrence counts: every word of a pattern (a run of word
 * characters) is bounded inside it by a character that is not a word character or by the
 * pattern's edge, where a counted occurrence is not glued to a word character either. So
 * wherever the pattern counts, each of its words is a whole word of the text, and one pass over
 * the text's words finds every place to check. A pattern without a word character is searched
 * with `indexOf`.
 *
 * The anchor is the pattern's word that the fewest patterns share (then the longest), so that a
 * word of the text stands for few patterns. The work is linear in the text as long as no anchor
 * stands for more than {@link MAX_PATTERNS_PER_ANCHOR} patterns ({@link linear}); a fold's
 * artifacts (paths, numbers, commands, errors, sentences) spread over many words, and
 * `occurrenceFinder` takes the automaton when they do not.
 */
export class WordAnchorMatcher {
  /** The anchors' keys; `firstPattern[slot]` is the first pattern (plus one) anchored by the key in `slot`, `nextPattern[index]` the next (plus one). */
  private readonly anchors: KeyTable
  private readonly firstPattern: Int32Array
  private readonly nextPattern: Int32Array
  /** Where each pattern's anchor begins in it, and its length (0 for a pattern without a word). */
  private readonly anchorOffset: Int32Array
  private readonly anchorLength: Int32Array
  /** Patterns without a word character. */
  private readonly wordless: number[] = []
  /** Whether no anchor stands for more than {@link MAX_PATTERNS_PER_ANCHOR} patterns, so a search is linear in the text. */
  readonly linear: boolean

  constructor(readonly patterns: readonly string[]) {
    const count = patterns.length
    this.anchorOffset = new Int32Array(count)
    this.anchorLength = new Int32Array(count)
    this.nextPattern = new Int32Array(count)
    // Every word of every pattern (where it begins, its length, its key), the words of pattern i from firstWord[i] to firstWord[i + 1].
    const words: number[] = []
    const firstWord = new Int32Array(count + 1)
    let characters = 0
    for (const pattern of patterns) characters += pattern.length
    // How many words of all the patterns share a key, by slot: a collision only makes an anchor look more common.
    const sharedKeys = new KeyTable((characters >> 1) + count)
    const shared = new Int32Array(sharedKeys.keys.length)
    for (let index = 0; index < count; index++) {
      const pattern = patterns[index]!
      firstWord[index] = words.length
      for (let position = 0; position < pattern.length; position++) {
        let code = pattern.charCodeAt(position)
        if (code >= 128 || WORD_CODES[code] === 0) continue
        const start = position
        let hash = HASH_SEED
        for (
          ;
          code < 128 && WORD_CODES[code] === 1;
          code = ++position < pattern.length ? pattern.charCodeAt(position) : 128
        )
          hash = nextHash(hash, code)
        const slot = sharedKeys.slot(wordKey(hash, position - start))
        shared[slot]!++
        words.push(start, position - start, slot)
      }
    }
    firstWord[count] = words.length
    this.anchors = new KeyTable(count)
    this.firstPattern = new Int32Array(this.anchors.keys.length)
    const perAnchor = new Int32Array(this.anchors.keys.length)
    let largest = 0
    // From the last pattern to the first, so that each anchor's list is in pattern order.
    for (let index = count - 1; index >= 0; index--) {
      const first = firstWord[index]!
      const last = firstWord[index + 1]!
      if (first === last) {
        if (patterns[index] !== '') this.wordless.push(index)
        continue
      }
      // The word the fewest patterns share, then the longest, then the first.
      let best = first
      for (let at = first + 3; at < last; at += 3) {
        const sharing = shared[words[at + 2]!]!
        const bestSharing = shared[words[best + 2]!]!
        if (sharing < bestSharing || (sharing === bestSharing && words[at + 1]! > words[best + 1]!)) best = at
      }
      this.anchorOffset[index] = words[best]!
      this.anchorLength[index] = words[best + 1]!
      const slot = this.anchors.slot(sharedKeys.keys[words[best + 2]!]!)
      this.nextPattern[index] = this.firstPattern[slot]!
      this.firstPattern[slot] = index + 1
      largest = Math.max(largest, ++perAnchor[slot]!)
    }
    this.linear = largest <= MAX_PATTERNS_PER_ANCHOR
  }

  /** Marks in `found` (one flag per pattern, by index) every pattern that occurs in `text`. */
  markFound(text: string, found: Uint8Array): void {
    const { patterns, anchors, firstPattern, nextPattern, anchorOffset, anchorLength } = this
    for (const index of this.wordless) if (!found[index] && occursAsWord(text, patterns[index]!)) found[index] = 1
    for (let position = 0; position < text.length; position++) {
      let code = text.charCodeAt(position)
      if (code >= 128 || WORD_CODES[code] === 0) continue
      const wordStart = position
      let hash = HASH_SEED
      for (; code < 128 && WORD_CODES[code] === 1; code = ++position < text.length ? text.charCodeAt(position) : 128)
        hash = nextHash(hash, code)
      const wordLength = position - wordStart
      const slot = anchors.find(wordKey(hash, wordLength))
      if (slot < 0) continue
      for (let index = firstPattern[slot]! - 1; index >= 0; index = nextPattern[index]! - 1) {
        if (found[index] || anchorLength[index] !== wordLength) continue
        const pattern = patterns[index]!
        const start = wordStart - anchorOffset[index]!
        if (start < 0 || !text.startsWith(pattern, start)) continue
        if (start > 0 && isWordCode(pattern.charCodeAt(0)) && isWordCode(text.charCodeAt(start - 1))) continue
        const end = start + pattern.length
        if (end < text.length && isWordCode(pattern.charCodeAt(pattern.length - 1)) && isWordCode(text.charCodeAt(end)))
          continue
        found[index] = 1
      }
    }
  }
}
