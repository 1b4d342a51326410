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
 * each node's first child inline (a trie of long patterns mostly has one child per node), the
 * root's children in a table by code unit (the search falls back to the root at most
 * characters), and every other edge in one open-addressing hash table keyed by (node, code),
 * which a map per node would make several times slower to build and to search. A fold builds
 * one matcher and searches a few texts with it, so building counts as much as searching: every
 * "none" is 0 (node 0, the root, is nobody's child, failure or output; pattern and slot numbers
 * are stored plus one), so the arrays need no filling, and the hash table grows with the edges.
 */
export class MultiPatternMatcher {
  private readonly firstCode: Uint16Array
  /** The first child, 0 for none. */
  private readonly firstChild: Int32Array
  private readonly failure: Int32Array
  /** The first pattern that ends at a node, plus one (0 for none). */
  private readonly patternAt: Int32Array
  /** The nearest node down the failure chain where a pattern ends, 0 for none. */
  private readonly outputLink: Int32Array
  /** The node itself when a pattern ends there, else its output link: where the search's walk of the outputs starts, one load a character. */
  private readonly firstOutput: Int32Array
  /** The node's first edge in the hash table, as its slot plus one (0 for none): the search probes the table only for such nodes. */
  private readonly firstEdge: Int32Array
  private readonly rootChild = new Int32Array(ROOT_TABLE)
  /** The hash table of further edges, by slot: the node plus one (0 for an empty slot), the code unit, the child, and the slot plus one of the node's next edge. */
  private edgeNode: Int32Array
  private edgeCode: Uint16Array
  private edgeChild: Int32Array
  private edgeNext: Int32Array
  private edges = 0
  /** The next pattern with the same text, plus one (so duplicates are all reported). */
  private readonly samePattern: Int32Array
  private readonly lengths: Int32Array
  /** Bit 1: the pattern begins with a word character; bit 2: it ends with one. */
  private readonly wordEdges: Uint8Array
  private readonly nodes: number

  constructor(readonly patterns: readonly string[]) {
    let capacity = 1
    for (const pattern of patterns) capacity += pattern.length
    this.firstCode = new Uint16Array(capacity)
    this.firstChild = new Int32Array(capacity)
    this.failure = new Int32Array(capacity)
    this.patternAt = new Int32Array(capacity)
    this.outputLink = new Int32Array(capacity)
    this.firstOutput = new Int32Array(capacity)
    this.firstEdge = new Int32Array(capacity)
    ;[this.edgeNode, this.edgeCode, this.edgeChild, this.edgeNext] = MultiPatternMatcher.table(64)
    this.samePattern = new Int32Array(patterns.length)
    this.lengths = new Int32Array(patterns.length)
    this.wordEdges = new Uint8Array(patterns.length)
    const { firstCode, firstChild, rootChild, patternAt } = this
    let nodes = 1
    for (let index = 0; index < patterns.length; index++) {
      const pattern = patterns[index]!
      if (pattern === '') continue
      this.lengths[index] = pattern.length
      this.wordEdges[index] =
        (isWordCode(pattern.charCodeAt(0)) ? 1 : 0) | (isWordCode(pattern.charCodeAt(pattern.length - 1)) ? 2 : 0)
      let node = 0
      for (let position = 0; position < pattern.length; position++) {
        const code = pattern.charCodeAt(position)
        // The child for `code`, made when missing.
        let next: number
        if (node === 0 && code < ROOT_TABLE) {
          next = rootChild[code]!
          if (next === 0) rootChild[code] = next = nodes++
        } else if (firstChild[node] === 0) {
          firstCode[node] = code
          firstChild[node] = next = nodes++
        } else if (firstCode[node] === code) next = firstChild[node]!
        else {
          next = this.edge(node, code)
          if (next === 0) this.addEdge(node, code, (next = nodes++))
        }
        node = next
      }
      this.samePattern[index] = patternAt[node]!
      patternAt[node] = index + 1
    }
    this.nodes = nodes
    this.link()
  }

  /** An empty hash table of `slots` slots (a power of two). */
  private static table(slots: number): [Int32Array, Uint16Array, Int32Array, Int32Array] {
    return [new Int32Array(slots), new Uint16Array(slots), new Int32Array(slots), new Int32Array(slots)]
  }

  private static hash(node: number, code: number): number {
    return Math.imul(node ^ Math.imul(code, 0x9e3779b1), 0x85ebca6b) >>> 0
  }

  /** The child of `node` by `code` in the hash table, 0 for none. */
  private edge(node: number, code: number): number {
    const { edgeNode, edgeCode } = this
    const mask = edgeNode.length - 1
    for (let slot = MultiPatternMatcher.hash(node, code) & mask; ; slot = (slot + 1) & mask) {
      const at = edgeNode[slot]!
      if (at === 0) return 0
      if (at === node + 1 && edgeCode[slot] === code) return this.edgeChild[slot]!
    }
  }

  /** Puts an edge in its slot (the node's list of edges is kept by the caller). */
  private place(node: number, code: number, child: number, next: number): number {
    const mask = this.edgeNode.length - 1
    let slot = MultiPatternMatcher.hash(node, code) & mask
    while (this.edgeNode[slot] !== 0) slot = (slot + 1) & mask
    this.edgeNode[slot] = node + 1
    this.edgeCode[slot] = code
    this.edgeChild[slot] = child
    this.edgeNext[slot] = next
    return slot + 1
  }

  private addEdge(node: number, code: number, child: number): void {
    // At most half full, so probes stay short: doubled (and every edge placed again) when it would be more.
    if (++this.edges * 2 > this.edgeNode.length) {
      const [nodesOf, codes, children] = [this.edgeNode, this.edgeCode, this.edgeChild]
      ;[this.edgeNode, this.edgeCode, this.edgeChild, this.edgeNext] = MultiPatternMatcher.table(nodesOf.length * 2)
      this.firstEdge.fill(0)
      for (let slot = 0; slot < nodesOf.length; slot++) {
        const owner = nodesOf[slot]! - 1
        if (owner >= 0) this.firstEdge[owner] = this.place(owner, codes[slot]!, children[slot]!, this.firstEdge[owner]!)
      }
    }
    this.firstEdge[node] = this.place(node, code, child, this.firstEdge[node]!)
  }

  private child(node: number, code: number): number {
    if (node === 0 && code < ROOT_TABLE) return this.rootChild[code]!
    if (this.firstChild[node] !== 0 && this.firstCode[node] === code) return this.firstChild[node]!
    return this.firstEdge[node] !== 0 ? this.edge(node, code) : 0
  }

  /** The failure link of `child`, reached from its parent (whose failure is `fallback`) by `code`. */
  private failureOf(fallback: number, code: number, child: number): number {
    let state = fallback
    let target = this.child(state, code)
    while (target === 0 && state !== 0) {
      state = this.failure[state]!
      target = this.child(state, code)
    }
    return target !== child ? target : 0
  }

  /** Failure and output links, breadth first (the root's children keep failure 0). */
  private link(): void {
    const {
      rootChild,
      firstCode,
      firstChild,
      failure,
      patternAt,
      outputLink,
      firstOutput,
      firstEdge,
      edgeCode,
      edgeChild,
      edgeNext,
    } = this
    const queue = new Int32Array(this.nodes)
    let tail = 0
    for (let code = 0; code < ROOT_TABLE; code++) if (rootChild[code] !== 0) queue[tail++] = rootChild[code]!
    if (firstChild[0] !== 0) queue[tail++] = firstChild[0]!
    for (let slot = firstEdge[0]!; slot !== 0; slot = edgeNext[slot - 1]!) queue[tail++] = edgeChild[slot - 1]!
    for (let head = 0; head < tail; head++) {
      const node = queue[head]!
      const fallback = failure[node]!
      outputLink[node] = patternAt[fallback] !== 0 ? fallback : outputLink[fallback]!
      firstOutput[node] = patternAt[node] !== 0 ? node : outputLink[node]!
      if (firstChild[node] !== 0) {
        const child = firstChild[node]!
        failure[child] = this.failureOf(fallback, firstCode[node]!, child)
        queue[tail++] = child
      }
      for (let slot = firstEdge[node]!; slot !== 0; slot = edgeNext[slot - 1]!) {
        const child = edgeChild[slot - 1]!
        failure[child] = this.failureOf(fallback, edgeCode[slot - 1]!, child)
        queue[tail++] = child
      }
    }
  }

  /** Marks in `found` (one flag per pattern, by index) every pattern that occurs in `text`. */
  markFound(text: string, found: Uint8Array): void {
    const {
      rootChild,
      firstCode,
      firstChild,
      firstEdge,
      failure,
      patternAt,
      outputLink,
      firstOutput,
      samePattern,
      lengths,
      wordEdges,
    } = this
    let state = 0
    for (let position = 0; position < text.length; position++) {
      const code = text.charCodeAt(position)
      let next = 0
      for (;;) {
        if (state === 0) {
          next = code < ROOT_TABLE ? rootChild[code]! : this.child(0, code)
          break
        }
        next =
          firstCode[state] === code && firstChild[state] !== 0
            ? firstChild[state]!
            : firstEdge[state] !== 0
              ? this.edge(state, code)
              : 0
        if (next !== 0) break
        state = failure[state]!
      }
      state = next
      for (let node = firstOutput[state]!; node !== 0; node = outputLink[node]!) {
        for (let pattern = patternAt[node]! - 1; pattern >= 0; pattern = samePattern[pattern]! - 1) {
          if (found[pattern]) continue
          const edges = wordEdges[pattern]!
          if (edges & 1) {
            const start = position - lengths[pattern]! + 1
            if (start > 0 && isWordCode(text.charCodeAt(start - 1))) continue
          }
          if (edges & 2 && position + 1 < text.length && isWordCode(text.charCodeAt(position + 1))) continue
          found[pattern] = 1
        }
      }
    }
  }
}
