import { isWordCode } from './occurs-as-word.ts'

/** Code units below this have a slot in the root's table: most of what a fold's texts hold is ASCII. */
const ROOT_TABLE = 128

/**
 * Finds which of many patterns occur in a text, in one pass over the text (Aho–Corasick): the
 * cost is linear in the text plus the patterns, never patterns × text. A pattern counts only
 * where it is not glued to a word character on a side where it begins or ends with one, so
 * `a.ts` is not found in `data.ts`, nor `5ms` in `15ms`, but `src/a.ts` is found in
 * `/app/src/a.ts:12`.
 *
 * The trie lives in typed arrays, one slot per node (at most one node per pattern character):
 * each node's first child inline (a trie of long patterns mostly has one child per node),
 * further children in a map, and the root's children in a table by code unit, since the
 * search falls back to the root at most characters.
 */
export class MultiPatternMatcher {
  private readonly firstCode: Int32Array
  private readonly firstChild: Int32Array
  /** Further children of the nodes that have more than one (few do), by node. */
  private readonly otherChildren = new Map<number, Map<number, number>>()
  /** 1 for a node that has further children in {@link otherChildren}: the search asks the map only then. */
  private readonly branching: Uint8Array
  private readonly rootChild = new Int32Array(ROOT_TABLE).fill(-1)
  private readonly failure: Int32Array
  /** The first pattern that ends at a node, -1 for none. */
  private readonly patternAt: Int32Array
  /** The nearest node down the failure chain where a pattern ends, -1 for none. */
  private readonly outputLink: Int32Array
  private nodes = 1
  /** The next pattern with the same text (so duplicates are all reported). */
  private readonly samePattern: Int32Array
  private readonly lengths: Int32Array
  private readonly wordStart: Uint8Array
  private readonly wordEnd: Uint8Array

  constructor(readonly patterns: readonly string[]) {
    let capacity = 1
    for (const pattern of patterns) capacity += pattern.length
    this.firstCode = new Int32Array(capacity).fill(-1)
    this.firstChild = new Int32Array(capacity).fill(-1)
    this.branching = new Uint8Array(capacity)
    this.failure = new Int32Array(capacity)
    this.patternAt = new Int32Array(capacity).fill(-1)
    this.outputLink = new Int32Array(capacity).fill(-1)
    this.samePattern = new Int32Array(patterns.length).fill(-1)
    this.lengths = new Int32Array(patterns.length)
    this.wordStart = new Uint8Array(patterns.length)
    this.wordEnd = new Uint8Array(patterns.length)
    const { firstCode, firstChild, otherChildren, rootChild, patternAt } = this
    let nodes = 1
    for (let index = 0; index < patterns.length; index++) {
      const pattern = patterns[index]!
      if (pattern === '') continue
      this.lengths[index] = pattern.length
      this.wordStart[index] = isWordCode(pattern.charCodeAt(0)) ? 1 : 0
      this.wordEnd[index] = isWordCode(pattern.charCodeAt(pattern.length - 1)) ? 1 : 0
      let node = 0
      for (let position = 0; position < pattern.length; position++) {
        const code = pattern.charCodeAt(position)
        // The child for `code`, made when missing (the root's ASCII children in its table).
        let next: number
        if (node === 0 && code < ROOT_TABLE) {
          next = rootChild[code]!
          if (next < 0) rootChild[code] = next = nodes++
        } else if (firstCode[node] === code) next = firstChild[node]!
        else if (firstCode[node] === -1) {
          firstCode[node] = code
          firstChild[node] = next = nodes++
        } else {
          let others = otherChildren.get(node)
          if (others === undefined) {
            otherChildren.set(node, (others = new Map()))
            this.branching[node] = 1
          }
          next = others.get(code) ?? -1
          if (next < 0) others.set(code, (next = nodes++))
        }
        node = next
      }
      this.samePattern[index] = patternAt[node]!
      patternAt[node] = index
    }
    this.nodes = nodes
    this.link()
  }

  private child(node: number, code: number): number {
    if (node === 0 && code < ROOT_TABLE) return this.rootChild[code]!
    if (this.firstCode[node] === code) return this.firstChild[node]!
    return this.branching[node] ? (this.otherChildren.get(node)!.get(code) ?? -1) : -1
  }

  /** The failure link of `child`, reached from its parent (whose failure is `fallback`) by `code`. */
  private failureOf(fallback: number, code: number, child: number): number {
    let state = fallback
    let target = this.child(state, code)
    while (target < 0 && state !== 0) {
      state = this.failure[state]!
      target = this.child(state, code)
    }
    return target >= 0 && target !== child ? target : 0
  }

  /** Failure and output links, breadth first (the root's children keep failure 0). */
  private link(): void {
    const { rootChild, firstCode, firstChild, otherChildren, failure, patternAt, outputLink } = this
    const queue = new Int32Array(this.nodes)
    let tail = 0
    for (let code = 0; code < ROOT_TABLE; code++) if (rootChild[code]! >= 0) queue[tail++] = rootChild[code]!
    if (firstCode[0] !== -1) queue[tail++] = firstChild[0]!
    for (const child of otherChildren.get(0)?.values() ?? []) queue[tail++] = child
    for (let head = 0; head < tail; head++) {
      const node = queue[head]!
      const fallback = failure[node]!
      outputLink[node] = patternAt[fallback]! >= 0 ? fallback : outputLink[fallback]!
      if (firstCode[node] !== -1) {
        const child = firstChild[node]!
        failure[child] = this.failureOf(fallback, firstCode[node]!, child)
        queue[tail++] = child
      }
      const others = otherChildren.get(node)
      if (others === undefined) continue
      for (const [code, child] of others) {
        failure[child] = this.failureOf(fallback, code, child)
        queue[tail++] = child
      }
    }
  }

  /** Marks in `found` (one flag per pattern, by index) every pattern that occurs in `text`. */
  markFound(text: string, found: Uint8Array): void {
    const { rootChild, firstCode, firstChild, otherChildren, branching, failure, patternAt, outputLink, samePattern, lengths, wordStart, wordEnd } = this
    let state = 0
    for (let position = 0; position < text.length; position++) {
      const code = text.charCodeAt(position)
      let next = -1
      for (;;) {
        if (state === 0) {
          next = code < ROOT_TABLE ? rootChild[code]! : (otherChildren.get(0)?.get(code) ?? (firstCode[0] === code ? firstChild[0]! : -1))
          break
        }
        next = firstCode[state] === code ? firstChild[state]! : branching[state] ? (otherChildren.get(state)!.get(code) ?? -1) : -1
        if (next >= 0) break
        state = failure[state]!
      }
      state = next < 0 ? 0 : next
      for (let node = patternAt[state]! >= 0 ? state : outputLink[state]!; node >= 0; node = outputLink[node]!) {
        for (let pattern = patternAt[node]!; pattern >= 0; pattern = samePattern[pattern]!) {
          if (found[pattern]) continue
          const start = position - lengths[pattern]! + 1
          if (wordStart[pattern] && start > 0 && isWordCode(text.charCodeAt(start - 1))) continue
          if (wordEnd[pattern] && position + 1 < text.length && isWordCode(text.charCodeAt(position + 1))) continue
          found[pattern] = 1
        }
      }
    }
  }
}
