import { describe, expect, it } from 'vitest'
import { pricesWithin, selectRegion } from '../src/engine-parts.ts'

/** Every cut balanced: each node is its own unit. */
function allBalanced(count: number): boolean[] {
  return Array.from({ length: count + 1 }, () => true)
}

describe('selectRegion with a head cap from pricesWithin (a fold of the last sent request)', () => {
  it('keeps the region inside the first `limit` nodes however many nodes follow them', () => {
    // 10 nodes of 100 tokens; the last answered request held the first 4; retain 100 (one node).
    const prices = Array.from({ length: 10 }, () => 100)
    const region = selectRegion(prices, allBalanced(10), 100, {
      prices: pricesWithin(prices, 4),
      maxTokens: 1_000_000,
    })
    // Infinity − Infinity = NaN used to stop the cap after one step back: the region ended at node 7.
    expect(region).toEqual({ start: 0, end: 3 })
  })

  it('still shrinks the head to its token budget inside the limit', () => {
    const prices = Array.from({ length: 10 }, () => 100)
    const region = selectRegion(prices, allBalanced(10), 100, { prices: pricesWithin(prices, 6), maxTokens: 250 })
    expect(region).toEqual({ start: 0, end: 1 })
  })

  it('moves a cut inside the limit to a balanced one (no tool call separated from its result)', () => {
    const prices = Array.from({ length: 10 }, () => 100)
    const cuts = allBalanced(10)
    // Nodes 2 and 3 are a tool call and its result: no cut between them.
    cuts[3] = false
    const region = selectRegion(prices, cuts, 100, { prices: pricesWithin(prices, 3), maxTokens: 1_000_000 })
    expect(region).toEqual({ start: 0, end: 1 })
  })

  it('leaves nothing when the limit is 0 (no answered request holds the head)', () => {
    const prices = Array.from({ length: 6 }, () => 100)
    expect(selectRegion(prices, allBalanced(6), 100, { prices: pricesWithin(prices, 0), maxTokens: 1e9 })).toBeNull()
  })
})
