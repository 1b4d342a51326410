import type { TrieNode } from './prefix-trie.ts'
import { createTrieRoot, sendPrefix, walkPrefix } from './prefix-trie.ts'
import type { PromptLayout } from './prompt-layout.ts'
import type { SharedPrefixEntry } from './shared-prefix-index.ts'
import { SharedPrefixIndex } from './shared-prefix-index.ts'

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
 * The prompts sent so far as a {@link TrieNode} trie whose time is the request number (a node's
 * `lastSent` is the latest request through it, `endedAt` the latest ending there). Matching a
 * prompt costs O(segments) plus the length of its first unshared segment (looked up among the
 * sibling branches' texts in a {@link SharedPrefixIndex}), however many earlier requests branch
 * there; a log is never compared character by character with every earlier request.
 */
export class SegmentTrie {
  private readonly root = createTrieRoot()
  /**
   * Per node, its children's texts per part, to find the one sharing the longest prefix with a
   * new segment without comparing it with every child (only segments of the same part count).
   */
  private readonly siblings = new Map<TrieNode, Map<string, SharedPrefixIndex>>()
  /** Each node's text in its parent's {@link siblings} index. */
  private readonly entries = new Map<
    TrieNode,
    { readonly index: SharedPrefixIndex; readonly entry: SharedPrefixEntry }
  >()
  /** Characters compared inside segments so far (matching and inserting): the trie's work, for tests. */
  readonly work = { comparedCharacters: 0 }

  /** Matches `layout`'s segments from `from` on (0: the whole prompt; `headSegments`: the messages only). */
  match(layout: PromptLayout, from = 0): SegmentTrieMatch {
    const path = walkPrefix(this.root, layout.segments, from)
    const node = path.at(-1) ?? this.root
    const position = from + path.length
    const wholeChars = (layout.offsets[position] as number) - (layout.offsets[from] as number)
    const next = layout.segments[position]
    // The sibling sharing most characters of the next segment (the latest one on a tie).
    const { chars: partial, latest: partialCandidate } =
      next === undefined ? { chars: 0 } : (this.siblings.get(node)?.get(next.part)?.longest(next.text) ?? { chars: 0 })
    const candidate = node.endedAt ?? partialCandidate ?? (node === this.root ? undefined : node.lastSent)
    return { depth: path.length, chars: wholeChars + partial, ...(candidate === undefined ? {} : { candidate }) }
  }

  /** Records that request `request` sent `layout` (segments from `from` on). */
  insert(layout: PromptLayout, request: number, from = 0): void {
    let parent = this.root
    sendPrefix(this.root, layout.segments, request, from).forEach((node, offset) => {
      const known = this.entries.get(node)
      if (known) known.index.touch(known.entry, request)
      else {
        const { part, text } = layout.segments[from + offset] as { part: string; text: string }
        let byPart = this.siblings.get(parent)
        if (!byPart) this.siblings.set(parent, (byPart = new Map()))
        let index = byPart.get(part)
        if (!index) byPart.set(part, (index = new SharedPrefixIndex(this.work)))
        this.entries.set(node, { index, entry: index.add(text, request) })
      }
      parent = node
    })
  }
}
