import { describe, expect, it } from 'vitest'
import type { FoldStall } from '../src/index.ts'
import { stallSummary } from '../src/index.ts'
import { nearestRankPercentile } from '../src/stall-summary.ts'

describe('nearestRankPercentile', () => {
  it('is the value at rank ⌈p / 100 × n⌉ of the sorted values, never an interpolation', () => {
    const shuffled = [7, 3, 10, 1, 9, 2, 8, 5, 6, 4]
    expect(nearestRankPercentile(shuffled, 50)).toBe(5) // rank 5
    expect(nearestRankPercentile(shuffled, 90)).toBe(9) // rank 9
    expect(nearestRankPercentile(shuffled, 91)).toBe(10) // rank ⌈9.1⌉ = 10
    expect(nearestRankPercentile(shuffled, 100)).toBe(10)
    expect(nearestRankPercentile(shuffled, 1)).toBe(1)
    expect(nearestRankPercentile([3, 4], 50)).toBe(3) // rank 1: no midpoint 3.5
    expect(nearestRankPercentile([42], 90)).toBe(42)
    expect(nearestRankPercentile([], 50)).toBeNull()
  })

  it('counts ranks in integers: p90 of 30 values is the 27th (0.9 × 30 is 27.000000000000004 in floating point)', () => {
    const values = Array.from({ length: 30 }, (_, index) => (index + 1) * 100)
    expect(nearestRankPercentile(values, 90)).toBe(2700)
  })

  it.each([0, 101, 50.5, Number.NaN])('refuses the percent %s', (percent) => {
    expect(() => nearestRankPercentile([1], percent)).toThrow(RangeError)
    expect(() => nearestRankPercentile([1], percent)).toThrow(
      `nearestRankPercentile: percent must be an integer from 1 to 100, got ${percent}`,
    )
  })
})

const sync = (foldMs: number): FoldStall => ({
  mode: 'sync',
  foldMs,
  waitedMs: foldMs,
  stallSavedMs: 0,
  postSwapPrefillMs: 300,
})
const background = (foldMs: number, waitedMs: number): FoldStall => ({
  mode: 'background',
  foldMs,
  waitedMs,
  stallSavedMs: foldMs - waitedMs,
  postSwapPrefillMs: 300,
})

describe('stallSummary', () => {
  it('sums the waits and takes nearest-rank percentiles over every fold, discarded ones included', () => {
    const folds: FoldStall[] = [
      sync(40_000),
      background(38_000, 0),
      background(41_000, 1_000),
      { ...background(39_000, 500), discarded: { reason: 'anchor-changed', costUnits: 1_250.5 } },
      background(37_000, 0),
    ]
    // Waits sorted: 0, 0, 500, 1,000, 40,000 → p50 rank ⌈2.5⌉ = 3, p90 rank ⌈4.5⌉ = 5.
    expect(stallSummary(folds)).toEqual({
      folds: 5,
      totalWaitMs: 41_500,
      p50WaitMs: 500,
      p90WaitMs: 40_000,
      maxWaitMs: 40_000,
      totalStallSavedMs: 38_000 + 40_000 + 38_500 + 37_000,
      discardedFolds: 1,
      discardedCostUnits: 1_250.5,
    })
  })

  it('a run without folds waited 0 ms and has no percentiles', () => {
    expect(stallSummary([])).toEqual({
      folds: 0,
      totalWaitMs: 0,
      p50WaitMs: null,
      p90WaitMs: null,
      maxWaitMs: null,
      totalStallSavedMs: 0,
      discardedFolds: 0,
      discardedCostUnits: 0,
    })
  })

  it.each([
    [{ ...sync(10), mode: 'async' }, 'stallSummary: fold 1: "mode" must be "sync" or "background", got "async"'],
    [
      { ...sync(10), waitedMs: -1 },
      'stallSummary: fold 1: "waitedMs" must be a finite number of milliseconds ≥ 0, got -1',
    ],
    [
      { ...sync(10), foldMs: Number.POSITIVE_INFINITY },
      'stallSummary: fold 1: "foldMs" must be a finite number of milliseconds ≥ 0, got Infinity',
    ],
    [
      { ...sync(10), postSwapPrefillMs: undefined },
      'stallSummary: fold 1: "postSwapPrefillMs" must be a finite number of milliseconds ≥ 0, got nothing',
    ],
    [
      { ...sync(10), discarded: { reason: ' ', costUnits: 1 } },
      'stallSummary: fold 1: "discarded.reason" must be a non-empty string, got " "',
    ],
    [
      { ...sync(10), discarded: { reason: 'stale', costUnits: Number.NaN } },
      'stallSummary: fold 1: "discarded.costUnits" must be a finite number ≥ 0, got NaN',
    ],
  ])('refuses the second record %j naming its index, the field and the value', (bad, message) => {
    expect(() => stallSummary([sync(5), bad as FoldStall])).toThrow(TypeError)
    expect(() => stallSummary([sync(5), bad as FoldStall])).toThrow(message)
  })
})
