import type { PromptLayout } from './prompt-layout.ts'
import { commonPrefixLength } from './prompt-layout.ts'

/**
 * One segment of a family's segment trie: the prompts the family has sent, shared by prefix.
 *
 * A request that sends a prefix refreshes `lastSent` on every node of its path, so a node is
 * never fresher than its parent: once a node has expired, its whole subtree has too.
 */
export interface TrieNode {
  readonly children: Map<number, TrieNode>
  readonly text: string
  /** Virtual time this segment was last sent as part of a request's prompt (root: unused). */
  lastSent: number
  /** `anthropic`: a breakpoint entry ends at this segment, last written or read at this time. */
  entryUsedAt?: number
  /** `deepseek`: persisted prefix units ending inside this segment: end (prompt characters) → last written or hit. */
  units?: Map<number, number>
}

/** A live child of the branch node that shares `sharedChars` characters of the next segment. */
export interface TrieBranch {
  readonly node: TrieNode
  readonly sharedChars: number
}

/** How far a request's prompt runs through the trie, live and counting expired nodes. */
export interface TrieMatch {
  /** The root, then the node of each leading segment of the prompt that is live. */
  readonly path: readonly TrieNode[]
  /** Characters of the longest live match (whole live segments, then the best live partial one). */
  readonly liveChars: number
  /** Live children of the last path node that share part of the prompt's next segment. */
  readonly branches: readonly TrieBranch[]
  /** Set when expired nodes would have matched further: how much, and how long they were idle. */
  readonly expired?: { readonly chars: number; readonly idleMs: number }
}

/** Creates the root of a new family. */
export function createTrieRoot(): TrieNode {
  return { children: new Map(), text: '', lastSent: Number.NEGATIVE_INFINITY }
}

/** Whether `node` was last sent more than `ttlMs` before `clock`. */
export function isExpired(node: TrieNode, clock: number, ttlMs: number): boolean {
  return clock - node.lastSent > ttlMs
}

/**
 * Matches `layout` against the trie under `root` in O(segments) plus one comparison per child
 * of the node where it branches off: first through live nodes, then on through expired ones to
 * measure what expiry cost.
 */
export function matchPrefix(root: TrieNode, layout: PromptLayout, clock: number, ttlMs: number): TrieMatch {
  const segments = layout.segments
  const path: TrieNode[] = [root]
  let node = root
  for (let depth = 0; depth < segments.length; depth++) {
    const child = node.children.get((segments[depth] as { id: number }).id)
    if (!child || isExpired(child, clock, ttlMs)) break
    path.push(child)
    node = child
  }
  const depth = path.length - 1
  const next = segments[depth]
  if (!next) return { path, liveChars: layout.offsets[depth] as number, branches: [] }
  const branches: TrieBranch[] = []
  const expiredChildren: TrieBranch[] = []
  let livePartial = 0
  for (const child of node.children.values()) {
    const sharedChars = commonPrefixLength(next.text, child.text)
    if (sharedChars === 0) continue
    if (isExpired(child, clock, ttlMs)) {
      expiredChildren.push({ node: child, sharedChars })
    } else {
      branches.push({ node: child, sharedChars })
      livePartial = Math.max(livePartial, sharedChars)
    }
  }
  const liveChars = (layout.offsets[depth] as number) + livePartial
  // The same walk without expiry, from where the live one stopped.
  const fullPath: TrieNode[] = []
  let fullNode = node
  for (let fullDepth = depth; fullDepth < segments.length; fullDepth++) {
    const child = fullNode.children.get((segments[fullDepth] as { id: number }).id)
    if (!child) break
    fullPath.push(child)
    fullNode = child
  }
  const fullDepth = depth + fullPath.length
  const fullStart = layout.offsets[fullDepth] as number
  const fullNext = segments[fullDepth]
  // Where no expired segment matched whole, the children compared above are the tails.
  const tails: TrieBranch[] = fullPath.length === 0 ? [...branches, ...expiredChildren] : []
  if (fullPath.length > 0 && fullNext)
    for (const child of fullNode.children.values())
      tails.push({ node: child, sharedChars: commonPrefixLength(fullNext.text, child.text) })
  let fullPartial = 0
  for (const tail of tails) fullPartial = Math.max(fullPartial, tail.sharedChars)
  const fullChars = fullStart + fullPartial
  if (fullChars <= liveChars) return { path, liveChars, branches }
  // idleMs: since the first expired character was last sent, by whichever expired node holds it.
  let lastSent = Number.NEGATIVE_INFINITY
  if (liveChars < fullStart) {
    let position = depth
    while ((layout.offsets[position + 1] as number) <= liveChars) position++
    const holders =
      position === depth
        ? expiredChildren.filter((child) => child.sharedChars > livePartial).map((child) => child.node)
        : [fullPath[position - depth] as TrieNode]
    for (const holder of holders) lastSent = Math.max(lastSent, holder.lastSent)
  } else {
    for (const tail of tails)
      if (tail.sharedChars > liveChars - fullStart) lastSent = Math.max(lastSent, tail.node.lastSent)
  }
  return { path, liveChars, branches, expired: { chars: fullChars - liveChars, idleMs: clock - lastSent } }
}

/**
 * Records that `layout` was sent at `clock`: adds the missing nodes and refreshes every node on
 * the path. Returns the node of each segment, in order.
 */
export function sendPrefix(root: TrieNode, layout: PromptLayout, clock: number): TrieNode[] {
  const nodes: TrieNode[] = []
  let node = root
  for (const segment of layout.segments) {
    let child = node.children.get(segment.id)
    if (!child) {
      child = { children: new Map(), text: segment.text, lastSent: clock }
      node.children.set(segment.id, child)
    }
    child.lastSent = Math.max(child.lastSent, clock)
    nodes.push(child)
    node = child
  }
  return nodes
}
