import type { PromptLayout } from './prompt-layout.ts'
import { partAt, sharedSegmentChars } from './prompt-layout.ts'

interface TrieNode {
  readonly children: Map<number, TrieNode>
  readonly text: string
  /** The part the segment belongs to (`tools`, `system`, `messages`). */
  readonly part: string
  /** The latest request whose prompt runs through this node. */
  latest: number
  /** The latest request whose prompt ends at this node. */
  endsHere?: number
}

/** How far a prompt runs through the trie, and the earlier request it is best compared with. */
export interface TrieMatch {
  /** Whole segments shared. */
  readonly depth: number
  /** Characters shared with the earlier request that shares most: whole segments, then the longest partial next segment. */
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
 * O(segments) plus a character comparison of its first unshared segment with each sibling
 * branch; a log is never compared character by character with every earlier request.
 */
export class SegmentTrie {
  private readonly root: TrieNode = { children: new Map(), text: '', part: '', latest: -1 }

  /** Matches `layout`'s segments from `from` on (0: the whole prompt; `headSegments`: the messages only). */
  match(layout: PromptLayout, from = 0): TrieMatch {
    let node = this.root
    let position = from
    while (position < layout.ids.length) {
      const child = node.children.get(layout.ids[position] as number)
      if (!child) break
      node = child
      position++
    }
    const depth = position - from
    const wholeChars = (layout.offsets[position] as number) - (layout.offsets[from] as number)
    const next = layout.texts[position]
    let partial = 0
    let partialCandidate: number | undefined
    if (next !== undefined) {
      const part = partAt(layout, position)
      for (const child of node.children.values()) {
        const shared = sharedSegmentChars(next, part, child.text, child.part)
        if (shared > partial || (shared === partial && shared > 0 && child.latest > (partialCandidate as number))) {
          partial = shared
          partialCandidate = child.latest
        }
      }
    }
    const candidate = node.endsHere ?? partialCandidate ?? (node === this.root ? undefined : node.latest)
    return { depth, chars: wholeChars + partial, ...(candidate === undefined ? {} : { candidate }) }
  }

  /** Records that request `request` sent `layout` (segments from `from` on). */
  insert(layout: PromptLayout, request: number, from = 0): void {
    let node = this.root
    for (let position = from; position < layout.ids.length; position++) {
      const id = layout.ids[position] as number
      let child = node.children.get(id)
      if (!child) {
        child = { children: new Map(), text: layout.texts[position] as string, part: partAt(layout, position), latest: request }
        node.children.set(id, child)
      }
      child.latest = request
      node = child
    }
    if (node !== this.root) node.endsHere = request
  }
}
