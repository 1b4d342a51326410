/** Whether UTF-16 code unit `code` is a word character (`[A-Za-z0-9_]`). */
function isWordCode(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
}

/**
 * Finds which of many patterns occur in a text, in one pass over the text (Aho–Corasick): the
 * cost is linear in the text plus the patterns, never patterns × text. A pattern counts only
 * where it is not glued to a word character on a side where it begins or ends with one, so
 * `a.ts` is not found in `data.ts`, nor `5ms` in `15ms`, but `src/a.ts` is found in
 * `/app/src/a.ts:12`.
 */
export class MultiPatternMatcher {
  // The trie, one entry per node: its first child (the common case in a trie of long patterns is
  // one child per node), further children in a map, the failure link, the first pattern that
  // ends at the node and the nearest node down the failure chain where a pattern ends.
  private readonly firstCode: number[] = [-1]
  private readonly firstChild: number[] = [-1]
  private readonly otherChildren: (Map<number, number> | undefined)[] = [undefined]
  private readonly failure: number[] = [0]
  private readonly patternAt: number[] = [-1]
  private readonly outputLink: number[] = [-1]
  /** The next pattern with the same text (so duplicates are all reported). */
  private readonly samePattern: number[]
  private readonly lengths: number[]
  private readonly wordStart: boolean[]
  private readonly wordEnd: boolean[]

  constructor(readonly patterns: readonly string[]) {
    this.samePattern = patterns.map(() => -1)
    this.lengths = patterns.map((pattern) => pattern.length)
    this.wordStart = patterns.map((pattern) => pattern.length > 0 && isWordCode(pattern.charCodeAt(0)))
    this.wordEnd = patterns.map((pattern) => pattern.length > 0 && isWordCode(pattern.charCodeAt(pattern.length - 1)))
    for (const [index, pattern] of patterns.entries()) {
      if (pattern === '') continue
      let node = 0
      for (let position = 0; position < pattern.length; position++) node = this.childOrNew(node, pattern.charCodeAt(position))
      this.samePattern[index] = this.patternAt[node]!
      this.patternAt[node] = index
    }
    this.link()
  }

  private child(node: number, code: number): number {
    if (this.firstCode[node] === code) return this.firstChild[node]!
    return this.otherChildren[node]?.get(code) ?? -1
  }

  private childOrNew(node: number, code: number): number {
    const existing = this.child(node, code)
    if (existing >= 0) return existing
    const created = this.firstCode.length
    this.firstCode.push(-1)
    this.firstChild.push(-1)
    this.otherChildren.push(undefined)
    this.failure.push(0)
    this.patternAt.push(-1)
    this.outputLink.push(-1)
    if (this.firstCode[node] === -1) {
      this.firstCode[node] = code
      this.firstChild[node] = created
    } else {
      let others = this.otherChildren[node]
      if (others === undefined) this.otherChildren[node] = others = new Map()
      others.set(code, created)
    }
    return created
  }

  private children(node: number): [number, number][] {
    const list: [number, number][] = []
    if (this.firstCode[node] !== -1) list.push([this.firstCode[node]!, this.firstChild[node]!])
    for (const entry of this.otherChildren[node] ?? []) list.push(entry)
    return list
  }

  /** Failure and output links, breadth first. */
  private link(): void {
    const queue: number[] = []
    for (const [, child] of this.children(0)) queue.push(child)
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head]!
      const fallback = this.failure[node]!
      this.outputLink[node] = this.patternAt[fallback]! >= 0 ? fallback : this.outputLink[fallback]!
      for (const [code, child] of this.children(node)) {
        let state = fallback
        let target = this.child(state, code)
        while (target < 0 && state !== 0) {
          state = this.failure[state]!
          target = this.child(state, code)
        }
        this.failure[child] = target >= 0 && target !== child ? target : 0
        queue.push(child)
      }
    }
  }

  /** Marks in `found` (one flag per pattern, by index) every pattern that occurs in `text`. */
  markFound(text: string, found: Uint8Array): void {
    let state = 0
    for (let position = 0; position < text.length; position++) {
      const code = text.charCodeAt(position)
      let next = this.child(state, code)
      while (next < 0 && state !== 0) {
        state = this.failure[state]!
        next = this.child(state, code)
      }
      state = next < 0 ? 0 : next
      for (let node = this.patternAt[state]! >= 0 ? state : this.outputLink[state]!; node >= 0; node = this.outputLink[node]!) {
        for (let pattern = this.patternAt[node]!; pattern >= 0; pattern = this.samePattern[pattern]!) {
          if (found[pattern]) continue
          const start = position - this.lengths[pattern]! + 1
          if (this.wordStart[pattern] && start > 0 && isWordCode(text.charCodeAt(start - 1))) continue
          if (this.wordEnd[pattern] && position + 1 < text.length && isWordCode(text.charCodeAt(position + 1))) continue
          found[pattern] = 1
        }
      }
    }
  }
}
