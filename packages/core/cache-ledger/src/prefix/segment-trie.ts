import type { PromptLayout, PromptSegment } from './prompt-layout.ts'
import type { SharedPrefixEntry } from './shared-prefix-index.ts'
import { SharedPrefixIndex } from './shared-prefix-index.ts'

interface TrieNode {
  readonly children: Map<number, TrieNode>
  /** The part the segment belongs to. */
  readonly part: string
  /** The latest request whose prompt runs through this node. */
  latest: number
  /** The latest request whose prompt ends at this node. */
  endsHere?: number
  /**
   * The children's texts per part, to find the one sharing the longest prefix with a new
   * segment without comparing it with every child (only segments of the same part count).
   */
  readonly siblings: Map<string, SharedPrefixIndex>
  /** This node's text in its parent's `siblings`. */
  readonly entry?: SharedPrefixEntry
}

/** How far a prompt runs through a {@link SegmentTrie}, and the earlier request it is best compared with. */
export interface SegmentTrieMatch {
  /** Whole segments shared. */
  readonly depth: number
  /**
   * Characters shared with the earlier request that shares most: whole segments, then the longest
   * partial next segment.
   */
  readonly chars: number
  /**
   * The earlier request to compare with: one whose prompt ends where the shared segments end
   * (this prompt extends it), else the one sharing most of the next segment, else the latest
   * through the last shared segment; undefined when nothing is shared.
   */
  readonly candidate?: number
}

/**
 * The prompts sent so far, shared by prefix, one node per segment. Matching a prompt costs
 * O(segments) plus the length of its first unshared segment (looked up among the sibling
 * branches' texts in a {@link SharedPrefixIndex}), however many earlier requests branch there;
 * a log is never compared character by character with every earlier request.
 */
export class SegmentTrie {
  private readonly root: TrieNode = { children: new Map(), part: '', latest: -1, siblings: new Map() }
  /** Characters compared inside segments so far (matching and inserting): the trie's work, for tests. */
  readonly work = { comparedCharacters: 0 }

  /** Matches `layout`'s segments from `from` on (0: the whole prompt; `headSegments`: the messages only). */
  match(layout: PromptLayout, from = 0): SegmentTrieMatch {
    let node = this.root
    let position = from
    const segments = layout.segments
    while (position < segments.length) {
      const child = node.children.get((segments[position] as PromptSegment).id)
      if (!child) break
      node = child
      position++
    }
    const depth = position - from
    const wholeChars = (layout.offsets[position] as number) - (layout.offsets[from] as number)
    const next = segments[position]
    // The sibling sharing most characters of the next segment (the latest one on a tie).
    const { chars: partial, latest: partialCandidate } =
      next === undefined ? { chars: 0 } : (node.siblings.get(next.part)?.longest(next.text) ?? { chars: 0 })
    const candidate = node.endsHere ?? partialCandidate ?? (node === this.root ? undefined : node.latest)
    return { depth, chars: wholeChars + partial, ...(candidate === undefined ? {} : { candidate }) }
  }

  /** Records that request `request` sent `layout` (segments from `from` on). */
  insert(layout: PromptLayout, request: number, from = 0): void {
    let node = this.root
    for (let position = from; position < layout.segments.length; position++) {
      const { id, text, part } = layout.segments[position] as PromptSegment
      let child = node.children.get(id)
      if (!child) {
        let siblings = node.siblings.get(part)
        if (!siblings) node.siblings.set(part, (siblings = new SharedPrefixIndex(this.work)))
        child = { children: new Map(), part, latest: request, siblings: new Map(), entry: siblings.add(text, request) }
        node.children.set(id, child)
      } else if (child.latest !== request) {
        ;(node.siblings.get(child.part) as SharedPrefixIndex).touch(child.entry as SharedPrefixEntry, request)
      }
      child.latest = request
      node = child
    }
    if (node !== this.root) node.endsHere = request
  }
}
