import { COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { describe, expect, it } from 'vitest'
import { tokensOf } from '../src/index.ts'
import { minimumWorkloadSummaryTokens, WORKLOAD_SUMMARY_TOKENS, workloadSummary } from '../src/workload-summary.ts'
import { resolveWorkload } from '../src/workload-options.ts'

const FOLDS = Array.from({ length: 100 }, (_, index) => index)
const tokens = (text: string) => tokensOf(text.length)

describe('workloadSummary', () => {
  it('writes 1,500 to 4,000 tokens per fold, a different size and text for different folds, the same for the same fold', () => {
    expect(WORKLOAD_SUMMARY_TOKENS).toEqual({ min: 1500, max: 4000 })
    const sizes = FOLDS.map((fold) => tokens(workloadSummary(fold)))
    for (const size of sizes) {
      expect(size).toBeGreaterThanOrEqual(1500)
      expect(size).toBeLessThanOrEqual(4000)
    }
    // Spread over the range, not one size: the draw is uniform from 1,600 to 4,000.
    expect(Math.min(...sizes)).toBeLessThan(1800)
    expect(Math.max(...sizes)).toBeGreaterThan(3700)
    expect(new Set(FOLDS.map((fold) => workloadSummary(fold))).size).toBe(FOLDS.length)
    expect(workloadSummary(7)).toBe(workloadSummary(7))
  })

  it('has the eight sections of the compaction instruction, in its order, each with at least one bullet', () => {
    const sections = [...COMPACTION_INSTRUCTION.matchAll(/^## (.+)$/gm)].map((match) => match[1])
    expect(sections).toHaveLength(8)
    for (const fold of [0, 1, 13]) {
      const text = workloadSummary(fold)
      expect([...text.matchAll(/^## (.+)$/gm)].map((match) => match[1])).toEqual(sections)
      for (const body of text.split(/^## .+$/m).slice(1)) expect(body.trim()).toMatch(/^- \S/)
      // Every line is a heading or a bullet: nothing for a reader to trip over.
      for (const line of text.split('\n')) expect(line).toMatch(/^(## |- )\S/)
    }
  })

  it("never writes more than the call's output cap, and fits the workload's smallest one (window 4,800)", () => {
    const smallestCap = resolveWorkload({ window: 4800 }).engine.maxTokens
    expect(smallestCap).toBe(300)
    for (const fold of FOLDS) {
      expect(tokens(workloadSummary(fold, { maxTokens: 2000 }))).toBeLessThanOrEqual(2000)
      const capped = workloadSummary(fold, { maxTokens: smallestCap })
      expect(tokens(capped)).toBeLessThanOrEqual(smallestCap)
      expect(tokens(capped)).toBeGreaterThanOrEqual(minimumWorkloadSummaryTokens(fold))
    }
    // A cap above the drawn size changes nothing.
    expect(workloadSummary(3, { maxTokens: 8192 })).toBe(workloadSummary(3))
  })

  it.each([
    [-1, {}, 'workloadSummary: foldIndex must be an integer ≥ 0, got -1'],
    [1.5, {}, 'workloadSummary: foldIndex must be an integer ≥ 0, got 1.5'],
    [
      0,
      { maxTokens: 100 },
      `workloadSummary: maxTokens must be an integer ≥ ${minimumWorkloadSummaryTokens(0)} (one bullet per section for fold 0), got 100`,
    ],
    [
      0,
      { maxTokens: 2000.5 },
      `workloadSummary: maxTokens must be an integer ≥ ${minimumWorkloadSummaryTokens(0)} (one bullet per section for fold 0), got 2000.5`,
    ],
  ])('refuses fold %s with %j', (fold, options, message) => {
    expect(() => workloadSummary(fold, options)).toThrow(RangeError)
    expect(() => workloadSummary(fold, options)).toThrow(message)
  })
})
