import type { PromptLayout, PromptSegment, RequestApi, TrieNode } from '@warmfold/cache-ledger/prefix'
import { createTrieRoot, layoutFrom, matchPrefix, sendPrefix } from '@warmfold/cache-ledger/prefix'

/** A request held in a {@link ConversationIndex}: its messages, and when it was sent. */
export interface IndexedRequest {
  readonly api: RequestApi
  readonly layout: PromptLayout
  /** When it was forwarded (ms). */
  readonly at: number
}

/**
 * The messages of remembered requests, per API, in the prefix model's prompt trie (messages only,
 * as the doctor's `messages` trie: a request whose tools or system changed still finds the
 * conversation it repeats). Unlike the doctor's, entries are removed again: each node counts the
 * entries through it and goes when none is left, so the trie holds what the sessions remember
 * and no more.
 */
export class ConversationIndex<T extends IndexedRequest> {
  private readonly roots = new Map<RequestApi, TrieNode>()
  /** Entries through each node (a node at 0 is removed). */
  private readonly through = new Map<TrieNode, number>()
  /** The entries whose messages end at each node. */
  private readonly ends = new Map<TrieNode, Set<T>>()

  /** Adds `entry`. */
  add(entry: T): void {
    const segments = messagesOf(entry.layout)
    if (!segments.length) return
    let root = this.roots.get(entry.api)
    if (!root) this.roots.set(entry.api, (root = createTrieRoot()))
    const nodes = sendPrefix(root, segments, entry.at)
    for (const node of nodes) this.through.set(node, (this.through.get(node) ?? 0) + 1)
    const last = nodes.at(-1) as TrieNode
    let ending = this.ends.get(last)
    if (!ending) this.ends.set(last, (ending = new Set()))
    ending.add(entry)
  }

  /** Removes `entry` (added before). */
  remove(entry: T): void {
    const segments = messagesOf(entry.layout)
    const root = this.roots.get(entry.api)
    if (!segments.length || !root) return
    let node = root
    for (const segment of segments) {
      const child = node.children.get(segment.id)
      if (!child) throw new Error(`ConversationIndex.remove: the entry of ${entry.api} at ${entry.at} was not added`)
      const left = (this.through.get(child) ?? 0) - 1
      if (segment === segments.at(-1)) {
        const ending = this.ends.get(child)
        ending?.delete(entry)
        if (ending?.size === 0) this.ends.delete(child)
      }
      if (left <= 0) {
        // Every node below was only on this entry's path too.
        node.children.delete(segment.id)
        this.forget(child)
        break
      }
      this.through.set(child, left)
      node = child
    }
    if (root.children.size === 0) this.roots.delete(entry.api)
  }

  /**
   * The entry with the most messages that are a prefix of `layout`'s messages, from the first to
   * `end` (exclusive; default all), sent within `ttlMs` of `now` and accepted by `accept`; the
   * latest sent on a tie.
   */
  longestPrefix(
    api: RequestApi,
    layout: PromptLayout,
    now: number,
    ttlMs: number,
    options: { end?: number; accept?: (entry: T) => boolean } = {},
  ): T | undefined {
    const root = this.roots.get(api)
    if (!root) return undefined
    const all = messagesOf(layout)
    const segments = options.end === undefined ? all : all.slice(0, Math.max(0, options.end))
    const path = matchPrefix(root, layoutFrom(segments, 0), now, ttlMs).path
    for (let depth = path.length - 1; depth > 0; depth--) {
      let best: T | undefined
      for (const entry of this.ends.get(path[depth] as TrieNode) ?? [])
        if (now - entry.at <= ttlMs && (options.accept?.(entry) ?? true) && (!best || entry.at >= best.at)) best = entry
      if (best) return best
    }
    return undefined
  }

  /** Nodes held, over every API (for tests: memory stays flat). */
  get nodes(): number {
    return this.through.size
  }

  private forget(node: TrieNode): void {
    const stack = [node]
    while (stack.length) {
      const item = stack.pop() as TrieNode
      this.through.delete(item)
      this.ends.delete(item)
      for (const child of item.children.values()) stack.push(child)
    }
  }
}

/** The message segments of `layout`. */
function messagesOf(layout: PromptLayout): readonly PromptSegment[] {
  return layout.segments.slice(layout.headSegments)
}
