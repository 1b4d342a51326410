import { describe, expect, it } from 'vitest'
import {
  ADAPTIVE_START,
  FIRST_FOLD_BOUNDARIES,
  FoldPace,
  snapshotRetainTokens,
  softThreshold,
} from '../src/triggers/fold-pace.ts'

describe('the adaptive soft threshold', () => {
  it('a fixed startRatio is S = startRatio × H, whatever the pace', () => {
    expect(softThreshold(100_000, 0.7, { boundaries: 3, tokensPerBoundary: 5000 })).toBe(70_000)
    expect(softThreshold(100_000, 0.7, undefined)).toBe(70_000)
  })

  it('without a pace the first fold arms at 0.8 × H', () => {
    expect(softThreshold(100_000, 'adaptive', undefined)).toBe(ADAPTIVE_START.first * 100_000)
  })

  it('arms (boundaries + 1) boundaries of growth below H, so the fold arms at most `boundaries` boundaries before H', () => {
    // 2 boundaries per fold at 4,000 tokens each: S = H − 12,000.
    expect(softThreshold(100_000, 'adaptive', { boundaries: 2, tokensPerBoundary: 4000 })).toBe(88_000)
  })

  it('stays within 0.5 × H and 0.95 × H', () => {
    expect(softThreshold(100_000, 'adaptive', { boundaries: 1, tokensPerBoundary: 100 })).toBe(95_000)
    expect(softThreshold(100_000, 'adaptive', { boundaries: 10, tokensPerBoundary: 20_000 })).toBe(50_000)
  })

  it('the snapshot keeps the retain budget less the growth of the lead S keeps below H (boundaries + 1), never less than a quarter of it', () => {
    expect(snapshotRetainTokens(20_000, undefined)).toBe(20_000)
    expect(snapshotRetainTokens(20_000, { boundaries: 2, tokensPerBoundary: 3000 })).toBe(11_000)
    expect(snapshotRetainTokens(20_000, { boundaries: 5, tokensPerBoundary: 9000 })).toBe(5000)
    expect(snapshotRetainTokens(20_000, { boundaries: 1, tokensPerBoundary: -100 })).toBe(20_000)
  })
})

describe('FoldPace', () => {
  it('knows nothing before two boundaries at different times', () => {
    const pace = new FoldPace()
    expect(pace.overlap()).toBeUndefined()
    pace.boundary(0, 1000)
    expect(pace.overlap()).toBeUndefined()
    pace.boundary(0, 1500)
    expect(pace.overlap()).toBeUndefined()
  })

  it('averages growth and time per boundary since the last shrink, and assumes two boundaries per fold until one was timed', () => {
    const pace = new FoldPace()
    pace.boundary(0, 50_000)
    pace.boundary(10_000, 54_000)
    pace.boundary(30_000, 62_000)
    // 12,000 tokens over 2 intervals of 15 s on average.
    expect(pace.overlap()).toEqual({ boundaries: FIRST_FOLD_BOUNDARIES, tokensPerBoundary: 6000 })
    pace.foldTook(40_000)
    // 40 s at 15 s per boundary: 3 boundaries.
    expect(pace.overlap()).toEqual({ boundaries: 3, tokensPerBoundary: 6000 })
    pace.foldTook(1000)
    // A fold can only be swapped in at a boundary: at least one.
    expect(pace.overlap()).toEqual({ boundaries: 1, tokensPerBoundary: 6000 })
  })

  it('starts over when the request shrinks (a fold or a prune landed)', () => {
    const pace = new FoldPace()
    pace.boundary(0, 50_000)
    pace.boundary(10_000, 90_000)
    pace.boundary(20_000, 30_000)
    expect(pace.overlap()).toBeUndefined()
    pace.boundary(40_000, 31_000)
    expect(pace.overlap()).toEqual({ boundaries: FIRST_FOLD_BOUNDARIES, tokensPerBoundary: 1000 })
  })

  it('ignores a fold duration that is not a finite number ≥ 0', () => {
    const pace = new FoldPace()
    pace.boundary(0, 0)
    pace.boundary(1000, 100)
    pace.foldTook(Number.NaN)
    pace.foldTook(-5)
    expect(pace.overlap()?.boundaries).toBe(FIRST_FOLD_BOUNDARIES)
  })
})
