import { describe, expect, it } from 'vitest'
import type { RequestFingerprint } from '../../src/prefix/index.ts'
import { createTrieRoot, isExpired, PrefixIndex, sendPrefix } from '../../src/prefix/index.ts'
import { walkPrefix } from '../../src/prefix/prefix-trie.ts'

/** A fingerprint of one family whose segments are the given digests, 10 characters each. */
function print(...hashes: string[]): RequestFingerprint {
  const segments = hashes.map((hash) => ({ hash, chars: 10 }))
  return { family: 'f', envelope: [], segments, tools: 0, system: false, messages: [], chars: 10 * hashes.length }
}

describe('the prompt trie', () => {
  it('keys layout segments by id and fingerprint segments by digest, refreshing the path and marking the end', () => {
    const root = createTrieRoot()
    const layout = [
      { id: 0, text: 'tools' },
      { id: 1, text: 'hello' },
    ]
    const nodes = sendPrefix(root, layout, 5)
    expect(nodes.map((node) => node.text)).toEqual(['tools', 'hello'])
    expect(nodes[1]?.endedAt).toBe(5)
    expect(nodes[0]?.endedAt).toBeUndefined()
    expect(root.endedAt).toBeUndefined()
    // A longer prompt later refreshes the shared nodes and the root; the old end stays marked.
    sendPrefix(root, [...layout, { id: 2, text: 'again' }], 9)
    expect(root.lastSent).toBe(9)
    expect(nodes.map((node) => node.lastSent)).toEqual([9, 9])
    expect(nodes[1]?.endedAt).toBe(5)
    // Walking stops where `live` refuses a node (here: last sent before 9 - 3).
    expect(walkPrefix(root, [...layout, { id: 2, text: 'again' }], 0, (node) => !isExpired(node, 12, 3))).toHaveLength(
      3,
    )
    expect(walkPrefix(root, [...layout, { id: 2, text: 'again' }], 0, (node) => !isExpired(node, 13, 3))).toEqual([])
    const digests = createTrieRoot()
    sendPrefix(digests, [{ hash: 'a' }, { hash: 'b' }], 1)
    expect(walkPrefix(digests, [{ hash: 'a' }, { hash: 'c' }])).toHaveLength(1)
    expect(walkPrefix(digests, [{ hash: 'a' }, { hash: 'b' }])[1]?.text).toBe('')
  })

  it('serves the ledger: live characters, extension of an earlier request, idle time and forgetting', () => {
    const index = new PrefixIndex()
    expect(index.match(print('a'), 0, 100)).toMatchObject({ known: false, idleMs: null })
    index.record(print('a', 'b'), 0)
    index.record(print('a', 'b', 'c'), 50)
    // At 130 the path a→b was sent at 50 (live for a TTL of 100), c at 50 too; d is new.
    expect(index.match(print('a', 'b', 'c', 'd'), 130, 100)).toEqual({
      known: true,
      segments: 3,
      chars: 30,
      liveChars: 30,
      extendsEarlier: true,
      idleMs: 80,
    })
    index.record(print('a', 'x'), 120)
    // At 200 only `a` (sent at 120) is live; b and c (sent at 50) are not, but still shared.
    expect(index.match(print('a', 'b', 'y'), 200, 100)).toEqual({
      known: true,
      segments: 2,
      chars: 20,
      liveChars: 10,
      extendsEarlier: true,
      idleMs: 80,
    })
    expect(index.size).toBe(4)
    index.sweep(200, 100)
    expect(index.size).toBe(2)
    index.sweep(400, 100)
    expect(index.size).toBe(0)
    expect(index.match(print('a'), 400, 100).known).toBe(false)
  })
})
