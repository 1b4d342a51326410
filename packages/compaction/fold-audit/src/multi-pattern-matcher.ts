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
  private readonly otherChildren: (Map<number, number> | undefined)[]
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
    // Filled, not sparse: a read past an array's end walks its prototype chain.
    this.otherChildren = Array.from<Map<number, number> | undefined>({ length: capacity }).fill(undefined)
    this.failure = new Int32Array(capacity)
    this.patternAt = new Int32Array(capacity).fill(-1)
    this.outputLink = new Int32Array(capacity).fill(-1)
    this.samePattern = new Int32Array(patterns.length).fill(-1)
    this.lengths = new Int32Array(patterns.length)
    this.wordStart = new Uint8Array(patterns.length)
    this.wordEnd = new Uint8Array(patterns.length)
    for (let index = 0; index < patterns.length; index++) {
      const pattern = patterns[index]!
      if (pattern === '') continue
      this.lengths[index] = pattern.length
      this.wordStart[index] = isWordCode(pattern.charCodeAt(0)) ? 1 : 0
      this.wordEnd[index] = isWordCode(pattern.charCodeAt(pattern.length - 1)) ? 1 : 0
      let node = 0
      for (let position = 0; position < pattern.length; position++) node = this.childOrNew(node, pattern.charCodeAt(position))
      this.samePattern[index] = this.patternAt[node]!
      this.patternAt[node] = index
    }
    this.link()
  }

  private child(node: number, code: number): number {
    if (node === 0 && code < ROOT_TABLE) return this.rootChild[code]!
    if (this.firstCode[node] === code) return this.firstChild[node]!
    return this.otherChildren[node]?.get(code) ?? -1
  }

  private childOrNew(node: number, code: number): number {
    const existing = this.child(node, code)
    if (existing >= 0) return existing
    const created = this.nodes++
    if (node === 0 && code < ROOT_TABLE) this.rootChild[code] = created
    else if (this.firstCode[node] === -1) {
      this.firstCode[node] = code
      this.firstChild[node] = created
    } else {
      let others = this.otherChildren[node]
      if (others === undefined) this.otherChildren[node] = others = new Map()
      others.set(code, created)
    }
    return created
  }

  /** Calls `visit(code, child)` for each child of `node`. */
  private eachChild(node: number, visit: (code: number, child: number) => void): void {
    if (node === 0) for (let code = 0; code < ROOT_TABLE; code++) if (this.rootChild[code]! >= 0) visit(code, this.rootChild[code]!)
    if (this.firstCode[node] !== -1) visit(this.firstCode[node]!, this.firstChild[node]!)
    const others = this.otherChildren[node]
    if (others !== undefined) for (const [code, child] of others) visit(code, child)
  }

  /** Failure and output links, breadth first. */
  private link(): void {
    const queue = new Int32Array(this.nodes)
    let tail = 0
    this.eachChild(0, (_code, child) => void (queue[tail++] = child))
    for (let head = 0; head < tail; head++) {
      const node = queue[head]!
      const fallback = this.failure[node]!
      this.outputLink[node] = this.patternAt[fallback]! >= 0 ? fallback : this.outputLink[fallback]!
      this.eachChild(node, (code, child) => {
        let state = fallback
        let target = this.child(state, code)
        while (target < 0 && state !== 0) {
          state = this.failure[state]!
          target = this.child(state, code)
        }
        this.failure[child] = target >= 0 && target !== child ? target : 0
        queue[tail++] = child
      })
    }
  }

  /** Marks in `found` (one flag per pattern, by index) every pattern that occurs in `text`. */
  markFound(text: string, found: Uint8Array): void {
    const { rootChild, firstCode, firstChild, otherChildren, failure, patternAt, outputLink, samePattern, lengths, wordStart, wordEnd } = this
    let state = 0
    for (let position = 0; position < text.length; position++) {
      const code = text.charCodeAt(position)
      let next = -1
      for (;;) {
        if (state === 0) {
          next = code < ROOT_TABLE ? rootChild[code]! : (otherChildren[0]?.get(code) ?? (firstCode[0] === code ? firstChild[0]! : -1))
          break
        }
        next = firstCode[state] === code ? firstChild[state]! : (otherChildren[state]?.get(code) ?? -1)
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
