/** A node of the compressed character trie: the characters `text[start..end)` lead to it from its parent. */
interface IndexNode {
  parent: IndexNode | undefined
  text: string
  start: number
  end: number
  /** Children by the first character code of their edge. */
  readonly children: Map<number, IndexNode>
  /** The largest `latest` of any entry at or below this node. */
  latest: number
}

/** A node without children yet. */
function indexNode(parent: IndexNode | undefined, text: string, start: number, end: number, latest: number): IndexNode {
  return { parent, text, start, end, children: new Map(), latest }
}

/** A text added to a {@link SharedPrefixIndex}: what {@link SharedPrefixIndex.touch} takes. */
export interface SharedPrefixEntry {
  readonly brand: 'SharedPrefixEntry'
}

/** What {@link SharedPrefixIndex.longest} found. */
export interface SharedPrefixMatch {
  /** Characters the text shares from its start with the entry that shares most (0: none shares any). */
  readonly chars: number
  /** The largest `latest` among the entries sharing `chars` characters; undefined when `chars` is 0. */
  readonly latest?: number
}

/**
 * Texts (distinct strings, each with a `latest` request number that only grows) in a compressed
 * character trie, so the text sharing the longest prefix with a query is found in time
 * proportional to the query's length, whatever the number of texts: comparing the query with
 * every text instead costs texts × length, quadratic in a log whose requests differ only inside
 * one long message. Edges point into the stored texts; nothing is copied.
 */
export class SharedPrefixIndex {
  private readonly root = indexNode(undefined, '', 0, 0, -1)

  /**
   * @param work counts the characters compared by {@link add} and {@link longest} (shared by
   *   several indexes, for tests).
   */
  constructor(private readonly work: { comparedCharacters: number } = { comparedCharacters: 0 }) {}

  /** Adds `text` (not added before) with its `latest` request number. */
  add(text: string, latest: number): SharedPrefixEntry {
    let node = this.root
    let position = 0
    while (position < text.length) {
      const child = node.children.get(text.charCodeAt(position))
      if (!child) {
        const leaf = indexNode(node, text, position, text.length, -1)
        node.children.set(text.charCodeAt(position), leaf)
        node = leaf
        break
      }
      const shared = this.edgeMatch(child, text, position)
      position += shared
      node = shared < child.end - child.start ? this.split(child, shared) : child
    }
    const entry = node as unknown as SharedPrefixEntry
    this.touch(entry, latest)
    return entry
  }

  /** Records that `entry` was sent again by request `latest` (larger than any before). */
  touch(entry: SharedPrefixEntry, latest: number): void {
    // The entry is the node its text ends at (a split keeps that node: it moves below the new one).
    let node: IndexNode | undefined = entry as unknown as IndexNode
    // Ancestors hold the largest latest below them: stop where one already has it.
    while (node && node.latest < latest) {
      node.latest = latest
      node = node.parent
    }
  }

  /** The entry sharing the longest prefix with `text`, and how many characters it shares. */
  longest(text: string): SharedPrefixMatch {
    let node = this.root
    let position = 0
    while (position < text.length) {
      const child = node.children.get(text.charCodeAt(position))
      if (!child) break
      const shared = this.edgeMatch(child, text, position)
      position += shared
      // Every entry below the edge shares exactly `position` characters when the query stops inside it.
      node = child
      if (shared < child.end - child.start) break
    }
    return position === 0 ? { chars: 0 } : { chars: position, latest: node.latest }
  }

  /**
   * Characters `text` from `position` shares with `child`'s edge (at least 1: the child was found
   * by its first character).
   */
  private edgeMatch(child: IndexNode, text: string, position: number): number {
    const limit = Math.min(child.end - child.start, text.length - position)
    let index = 1
    while (index < limit && child.text.charCodeAt(child.start + index) === text.charCodeAt(position + index)) index++
    this.work.comparedCharacters += index
    return index
  }

  /** Splits `child`'s edge after `length` characters and returns the new node in between. */
  private split(child: IndexNode, length: number): IndexNode {
    const parent = child.parent as IndexNode
    const middle = indexNode(parent, child.text, child.start, child.start + length, child.latest)
    parent.children.set(child.text.charCodeAt(child.start), middle)
    child.parent = middle
    child.start += length
    middle.children.set(child.text.charCodeAt(child.start), child)
    return middle
  }
}
