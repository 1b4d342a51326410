import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { layoutOf, SegmentInterner, SegmentTrie, SharedPrefixIndex } from '../../src/prefix/index.ts'

/** The answer by comparing the query with every text: the longest shared prefix, the latest on a tie. */
function naiveLongest(texts: ReadonlyMap<string, number>, query: string): { chars: number; latest?: number } {
  let best = { chars: 0 } as { chars: number; latest?: number }
  for (const [text, latest] of texts) {
    let shared = 0
    while (shared < text.length && shared < query.length && text[shared] === query[shared]) shared++
    if (shared > best.chars || (shared === best.chars && shared > 0 && latest > (best.latest as number)))
      best = { chars: shared, latest }
  }
  return best
}

describe('SharedPrefixIndex', () => {
  it('finds the text sharing the longest prefix, the latest on a tie, as comparing with every text does', () => {
    // A small alphabet, so texts share long prefixes, are prefixes of each other, and edges split often.
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 12 })
    const step = fc.oneof(fc.record({ add: text }), fc.record({ touch: fc.nat() }), fc.record({ query: text }))
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const index = new SharedPrefixIndex()
        const texts = new Map<string, number>()
        const entries = new Map<string, ReturnType<SharedPrefixIndex['add']>>()
        let request = 0
        for (const item of steps) {
          if ('add' in item && item.add !== '' && !texts.has(item.add)) {
            texts.set(item.add, ++request)
            entries.set(item.add, index.add(item.add, request))
          } else if ('touch' in item && texts.size) {
            const chosen = [...texts.keys()][item.touch % texts.size] as string
            texts.set(chosen, ++request)
            index.touch(entries.get(chosen)!, request)
          } else if ('query' in item) {
            expect(index.longest(item.query)).toEqual(naiveLongest(texts, item.query))
          }
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('SegmentTrie', () => {
  it('compares characters in proportion to the prompts, not to requests × characters, when requests differ only inside one long message', () => {
    // 150 requests whose one 20,000-character message differs from every other request's only in its tail.
    const interner = new SegmentInterner()
    const trie = new SegmentTrie()
    const body = 'the same pasted document in every request '.repeat(500)
    let promptChars = 0
    for (let index = 0; index < 150; index++) {
      const layout = layoutOf(
        {
          api: 'openai-chat',
          model: 'm',
          envelope: {},
          tools: [],
          system: 'Be brief.',
          messages: [{ role: 'user', index: 1, value: { role: 'user', content: `${body} revision ${index}` } }],
        },
        interner,
      )
      const match = trie.match(layout)
      // Everything but the tail is shared with the previous request.
      if (index > 0) expect(match.chars).toBeGreaterThan(body.length)
      trie.insert(layout, index)
      promptChars += layout.offsets[layout.segments.length] as number
    }
    // Comparing each message with every earlier one would be about 150 × 149 / 2 × 20,000 = 224 million characters.
    expect(trie.work.comparedCharacters).toBeLessThan(3 * promptChars)
  })
})

describe('SegmentInterner', () => {
  it('gives long texts (interned by digest) one id per distinct text and the one stored copy', () => {
    const interner = new SegmentInterner()
    const long = 'x'.repeat(40_000)
    const first = interner.intern(`${long}a`)
    const other = interner.intern(`${long}b`)
    const again = interner.intern(`${'x'.repeat(40_000)}a`)
    expect(other.id).not.toBe(first.id)
    expect(again.id).toBe(first.id)
    expect(again.text).toBe(first.text)
    expect(interner.intern('short').id).toBe(interner.intern('short').id)
  })
})
