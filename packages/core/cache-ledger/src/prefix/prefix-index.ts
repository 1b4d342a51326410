import type { CanonicalDigest } from './canonical-digest.ts'
import type { TrieNode } from './prefix-trie.ts'
import { countNodes, createTrieRoot, forgetStale, sendPrefix, walkPrefix } from './prefix-trie.ts'
import type { RequestFingerprint } from './request-fingerprint.ts'

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
 * The prefixes of earlier requests, one {@link TrieNode} trie per cache family, keyed by segment
 * digest: a node's `lastSent` is when a request through it was last sent (the root's: the family's
 * last request), so the live part of a match is a prefix of it.
 *
 * Nodes not sent for `forgetAfterMs` (and not within a family's TTL) are dropped by
 * {@link sweep}, so memory follows the traffic of that window, not the process's lifetime.
 */
export class PrefixIndex {
  private readonly families = new Map<string, TrieNode>()

  /** Matches `print` against its family at `now` with the family's `ttlMs` (`Infinity`: never expires). */
  match(print: RequestFingerprint, now: number, ttlMs: number): PrefixMatch {
    const family = this.families.get(print.family)
    if (!family) return { known: false, segments: 0, chars: 0, liveChars: 0, extendsEarlier: false, idleMs: null }
    const path = walkPrefix(family, print.segments)
    let chars = 0
    let liveChars = 0
    path.forEach((node, position) => {
      chars += (print.segments[position] as CanonicalDigest).chars
      if (now - node.lastSent <= ttlMs) liveChars = chars
    })
    return {
      known: true,
      segments: path.length,
      chars,
      liveChars,
      extendsEarlier: path.at(-1)?.endedAt !== undefined,
      idleMs: Math.max(0, now - family.lastSent),
    }
  }

  /** Records `print` as sent at `sentAt`: creates or refreshes every node on its path. */
  record(print: RequestFingerprint, sentAt: number): void {
    let family = this.families.get(print.family)
    if (!family) this.families.set(print.family, (family = createTrieRoot()))
    sendPrefix(family, print.segments, sentAt)
  }

  /**
   * Drops every node not sent for more than `forgetAfterMs` before `now`, and every family
   * whose last request is that old.
   */
  sweep(now: number, forgetAfterMs: number): void {
    for (const [key, family] of this.families) {
      if (now - family.lastSent > forgetAfterMs) this.families.delete(key)
      else forgetStale(family, now, forgetAfterMs)
    }
  }

  /** Number of nodes held, for tests of {@link sweep}. */
  get size(): number {
    let count = 0
    for (const family of this.families.values()) count += countNodes(family)
    return count
  }
}
