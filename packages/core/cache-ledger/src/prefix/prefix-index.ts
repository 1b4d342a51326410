import type { RequestFingerprint } from './request-fingerprint.ts'

/** One prompt segment of one or more earlier requests of a family. */
interface IndexNode {
  readonly children: Map<string, IndexNode>
  /** When a request through this node was last sent (clock milliseconds). */
  sentAt: number
  /** Whether an earlier request ended here. */
  ends: boolean
}

interface Family {
  readonly root: IndexNode
  lastSentAt: number
}

/** How far a request matches the earlier requests of its family. */
export interface PrefixMatch {
  /** Whether the family had an earlier request. */
  readonly known: boolean
  /** Segments shared with the best-matching earlier request, whatever their age. */
  readonly segments: number
  /** Characters of those segments. */
  readonly chars: number
  /** Characters of the shared prefix sent within the TTL: what a provider cache can still hold. */
  readonly liveChars: number
  /** Whether an earlier request ended exactly where the match ends (the request extends it). */
  readonly extendsEarlier: boolean
  /** Milliseconds since the family's previous request, or null for its first. */
  readonly idleMs: number | null
}

/**
 * The prefixes of earlier requests, one trie per cache family, keyed by segment hash. Each node
 * remembers when it was last sent; a request refreshes every node on its path, so along a path
 * the times never increase and the live part of a match is a prefix of it.
 *
 * Nodes not sent for `forgetAfterMs` (and not within a family's TTL) are dropped by
 * {@link sweep}, so memory follows the traffic of that window, not the process's lifetime.
 */
export class PrefixIndex {
  private readonly families = new Map<string, Family>()

  /** Matches `print` against its family at `now` with the family's `ttlMs` (`Infinity`: never expires). */
  match(print: RequestFingerprint, now: number, ttlMs: number): PrefixMatch {
    const family = this.families.get(print.family)
    if (!family) return { known: false, segments: 0, chars: 0, liveChars: 0, extendsEarlier: false, idleMs: null }
    let node = family.root
    let segments = 0
    let chars = 0
    let liveChars = 0
    for (const segment of print.segments) {
      const child = node.children.get(segment.hash)
      if (!child) break
      node = child
      segments += 1
      chars += segment.chars
      if (now - child.sentAt <= ttlMs) liveChars = chars
    }
    return {
      known: true,
      segments,
      chars,
      liveChars,
      extendsEarlier: segments > 0 && node.ends,
      idleMs: Math.max(0, now - family.lastSentAt),
    }
  }

  /** Records `print` as sent at `sentAt`: creates or refreshes every node on its path. */
  record(print: RequestFingerprint, sentAt: number): void {
    let family = this.families.get(print.family)
    if (!family) {
      family = { root: { children: new Map(), sentAt, ends: false }, lastSentAt: sentAt }
      this.families.set(print.family, family)
    }
    family.lastSentAt = Math.max(family.lastSentAt, sentAt)
    let node = family.root
    node.sentAt = Math.max(node.sentAt, sentAt)
    for (const segment of print.segments) {
      const key = segment.hash
      let child = node.children.get(key)
      if (!child) {
        child = { children: new Map(), sentAt, ends: false }
        node.children.set(key, child)
      } else if (child.sentAt < sentAt) {
        child.sentAt = sentAt
      }
      node = child
    }
    node.ends = true
  }

  /**
   * Drops every node not sent for more than `forgetAfterMs` before `now`, and every family
   * whose last request is that old. A dropped node's subtree goes with it: its descendants
   * were sent no later than it.
   */
  sweep(now: number, forgetAfterMs: number): void {
    for (const [key, family] of this.families) {
      if (now - family.lastSentAt > forgetAfterMs) {
        this.families.delete(key)
        continue
      }
      const stack: IndexNode[] = [family.root]
      while (stack.length) {
        const node = stack.pop() as IndexNode
        for (const [hash, child] of node.children) {
          if (now - child.sentAt > forgetAfterMs) node.children.delete(hash)
          else stack.push(child)
        }
      }
    }
  }

  /** Number of nodes held, for tests of {@link sweep}. */
  get size(): number {
    let count = 0
    for (const family of this.families.values()) {
      const stack: IndexNode[] = [family.root]
      while (stack.length) {
        const node = stack.pop() as IndexNode
        count += node.children.size
        for (const child of node.children.values()) stack.push(child)
      }
    }
    return count
  }
}
