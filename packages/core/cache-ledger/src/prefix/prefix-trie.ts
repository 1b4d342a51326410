import type { PromptLayout } from './prompt-layout.ts'
import { commonPrefixLength } from './prompt-layout.ts'

/** A segment as a trie keys it: a layout's by its interned id, a fingerprint's by its digest. */
export type TrieSegment = { readonly id: number; readonly text: string } | { readonly hash: string }

const keyOf = (segment: TrieSegment): number | string => ('id' in segment ? segment.id : segment.hash)

/**
 * One segment of a prompt trie: the prompts sent so far, shared by prefix. The one index of the
 * prefix model: the simulator's families (virtual clock, block-granular entries), the ledger's
 * {@link PrefixIndex} (digests, TTL) and the doctor's {@link SegmentTrie} (request numbers as time).
 *
 * A request that sends a prefix refreshes `lastSent` on every node of its path, so a node is
 * never fresher than its parent: once a node has expired, its whole subtree has too.
 */
export interface TrieNode {
  readonly children: Map<number | string, TrieNode>
  /** The segment's text (empty where the trie keeps digests only). */
  readonly text: string
  /** Time this segment was last sent as part of a request's prompt (root: any prompt of the trie). */
  lastSent: number
  /** Time a prompt last ended at this node (never set on the root). */
  endedAt?: number
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
  const path = [root, ...walkPrefix(root, segments, 0, (child) => !isExpired(child, clock, ttlMs))]
  const node = path.at(-1) as TrieNode
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
  const fullPath = walkPrefix(node, segments, depth)
  const fullNode = fullPath.at(-1) ?? node
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
 * The nodes below `node` that `segments` from `from` on run through, as far as they exist and
 * `live` accepts them (always, by default).
 */
export function walkPrefix(
  node: TrieNode,
  segments: readonly TrieSegment[],
  from = 0,
  live: (child: TrieNode) => boolean = () => true,
): TrieNode[] {
  const path: TrieNode[] = []
  for (let position = from; position < segments.length; position++) {
    const child = node.children.get(keyOf(segments[position] as TrieSegment))
    if (!child || !live(child)) break
    path.push(child)
    node = child
  }
  return path
}

/**
 * Records that `segments` (from `from` on) were sent at `clock`: adds the missing nodes, refreshes
 * every node on the path and marks where the prompt ends. Returns the node of each segment, in order.
 */
export function sendPrefix(root: TrieNode, segments: readonly TrieSegment[], clock: number, from = 0): TrieNode[] {
  const nodes: TrieNode[] = []
  let node = root
  root.lastSent = Math.max(root.lastSent, clock)
  for (let position = from; position < segments.length; position++) {
    const segment = segments[position] as TrieSegment
    const key = keyOf(segment)
    let child = node.children.get(key)
    if (!child) {
      child = { children: new Map(), text: 'text' in segment ? segment.text : '', lastSent: clock }
      node.children.set(key, child)
    }
    child.lastSent = Math.max(child.lastSent, clock)
    nodes.push(child)
    node = child
  }
  if (node !== root) node.endedAt = clock
  return nodes
}

/**
 * Drops every node under `root` not sent for more than `forgetAfterMs` before `now`. A dropped
 * node's subtree goes with it: its descendants were sent no later than it.
 */
export function forgetStale(root: TrieNode, now: number, forgetAfterMs: number): void {
  const stack: TrieNode[] = [root]
  while (stack.length) {
    const node = stack.pop() as TrieNode
    for (const [key, child] of node.children) {
      if (now - child.lastSent > forgetAfterMs) node.children.delete(key)
      else stack.push(child)
    }
  }
}

export function countNodes(root: TrieNode): number {
  let count = 0
  const stack: TrieNode[] = [root]
  while (stack.length) {
    const node = stack.pop() as TrieNode
    count += node.children.size
    for (const child of node.children.values()) stack.push(child)
  }
  return count
}
