import type { ToolResultContent } from '@warmfold/llm'
import { imageBlock, textBlock } from '@warmfold/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { codePointLength, PRUNE_MARKER, pruneContent } from '../src/index.ts'
import { codePointOffset } from '../src/code-point-length.ts'
import { PRUNE_MARKER_LENGTH } from '../src/prune-budget.ts'
import {
  budgets,
  contents,
  isWellFormed,
  measureContent,
  overBudgetContents,
  textCodePoints,
} from './pruner-fixtures.ts'

const RUNS = { numRuns: 300 }

function textOf(blocks: readonly ToolResultContent[]): string {
  return blocks.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

describe('codePointLength / codePointOffset', () => {
  it('count code points like Array.from, astral characters and lone surrogates as one', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
            fc.constantFrom('\ud800', '\udc00'),
          ),
          maxLength: 40,
        }),
        (text) => {
          expect(codePointLength(text)).toBe(Array.from(text).length)
          const points = Array.from(text)
          for (let count = 0; count <= points.length + 1; count += 1)
            expect(text.slice(0, codePointOffset(text, count))).toBe(points.slice(0, count).join(''))
        },
      ),
      RUNS,
    )
  })
})

describe('pruneContent properties', () => {
  it('is idempotent: a pruned result is within budget and a second pass returns null', () => {
    fc.assert(
      fc.property(fc.oneof(contents(), overBudgetContents), budgets, (blocks, budget) => {
        const pruned = pruneContent(blocks, budget)
        if (pruned === null) return
        expect(measureContent(pruned)).toBeLessThanOrEqual(budget.thresholdChars)
        expect(pruneContent(pruned, budget)).toBeNull()
      }),
      RUNS,
    )
  })

  it('never grows content: null at or below the threshold, strictly fewer code points above it', () => {
    fc.assert(
      fc.property(fc.oneof(contents(), overBudgetContents), budgets, (blocks, budget) => {
        const before = measureContent(blocks)
        const pruned = pruneContent(blocks, budget)
        if (before <= budget.thresholdChars) expect(pruned).toBeNull()
        else expect(measureContent(pruned!)).toBeLessThan(before)
      }),
      RUNS,
    )
  })

  it('keeps exactly the first headChars and last tailChars code points around the marker', () => {
    fc.assert(
      fc.property(overBudgetContents, budgets, (blocks, budget) => {
        const points = textCodePoints(blocks)
        const pruned = pruneContent(blocks, budget)!
        const head = points.slice(0, budget.headChars).join('')
        const tail = points.slice(points.length - budget.tailChars).join('')
        expect(textOf(pruned)).toBe(head + PRUNE_MARKER + tail)
        expect(measureContent(pruned)).toBe(budget.headChars + PRUNE_MARKER_LENGTH + budget.tailChars)
      }),
      RUNS,
    )
  })

  it('never produces a lone surrogate from well-formed input, nor an empty text block', () => {
    fc.assert(
      fc.property(overBudgetContents, budgets, (blocks, budget) => {
        for (const block of pruneContent(blocks, budget)!) {
          if (block.type !== 'text') continue
          expect(isWellFormed(block.text)).toBe(true)
          expect(block.text).not.toBe('')
        }
      }),
      RUNS,
    )
  })

  it('keeps non-text blocks in order, each after exactly the kept text that preceded it', () => {
    fc.assert(
      fc.property(overBudgetContents, budgets, (blocks, budget) => {
        const points = textCodePoints(blocks)
        const tailStart = points.length - budget.tailChars
        const pruned = pruneContent(blocks, budget)!
        expect(pruned.filter((block) => block.type !== 'text')).toEqual(blocks.filter((block) => block.type !== 'text'))
        let before = 0
        let keptBefore = ''
        const expected: string[] = []
        const actual: string[] = []
        for (const block of blocks) {
          if (block.type === 'text') before += codePointLength(block.text)
          else
            expected.push(
              points.slice(0, Math.min(before, budget.headChars)).join('') +
                (before > budget.headChars ? PRUNE_MARKER : '') +
                points.slice(tailStart, Math.max(tailStart, before)).join(''),
            )
        }
        for (const block of pruned) {
          if (block.type === 'text') keptBefore += block.text
          else actual.push(keptBefore)
        }
        expect(actual).toEqual(expected)
      }),
      RUNS,
    )
  })
})

describe('pruneContent examples', () => {
  const budget = { thresholdChars: PRUNE_MARKER_LENGTH + 6, headChars: 3, tailChars: 2 }

  it('leaves a result at exactly the threshold alone', () => {
    expect(pruneContent([textBlock('x'.repeat(budget.thresholdChars))], budget)).toBeNull()
    expect(pruneContent([], budget)).toBeNull()
    expect(pruneContent([imageBlock('image/png', 'AAAA')], budget)).toBeNull()
  })

  it('cuts between code points when the head ends inside an astral run', () => {
    const text = '😀'.repeat(budget.thresholdChars + 1)
    const [block] = pruneContent([textBlock(text)], budget)!
    expect(block).toEqual(textBlock(`😀😀😀${PRUNE_MARKER}😀😀`))
  })

  it('writes the marker into the block where the omitted middle begins and drops blocks inside it', () => {
    const blocks = [
      textBlock('abc'),
      textBlock('d'.repeat(80)),
      imageBlock('image/png', 'AAAA'),
      textBlock('e'.repeat(10)),
      textBlock('yz'),
    ]
    expect(pruneContent(blocks, budget)).toEqual([
      textBlock('abc'),
      textBlock(PRUNE_MARKER),
      imageBlock('image/png', 'AAAA'),
      textBlock('yz'),
    ])
  })

  it('puts head, marker and tail in one block when the cut is inside it', () => {
    const blocks = [textBlock(`abc${'-'.repeat(100)}yz`), imageBlock('image/png', 'AAAA')]
    expect(pruneContent(blocks, budget)).toEqual([textBlock(`abc${PRUNE_MARKER}yz`), imageBlock('image/png', 'AAAA')])
  })

  it('supports zero head and zero tail', () => {
    const text = 'q'.repeat(200)
    expect(
      pruneContent([textBlock(text)], { thresholdChars: PRUNE_MARKER_LENGTH, headChars: 0, tailChars: 0 }),
    ).toEqual([textBlock(PRUNE_MARKER)])
    expect(
      pruneContent([textBlock('ab'), textBlock(text)], {
        thresholdChars: PRUNE_MARKER_LENGTH + 2,
        headChars: 0,
        tailChars: 2,
      }),
    ).toEqual([textBlock(PRUNE_MARKER), textBlock('qq')])
  })

  it('rejects an invalid budget naming the keys', () => {
    expect(() => pruneContent([textBlock('x')], { thresholdChars: 10, headChars: 5, tailChars: 5 })).toThrow(
      /headChars \(5\) \+ PRUNE_MARKER .* \+ tailChars \(5\) .* thresholdChars \(10\)/,
    )
    expect(() => pruneContent([textBlock('x')], { thresholdChars: 100, headChars: 1.5, tailChars: 0 })).toThrow(
      /headChars must be an integer/,
    )
  })

  it('has a byte-stable marker with no digits in it', () => {
    expect(PRUNE_MARKER).not.toMatch(/\d/)
    expect(PRUNE_MARKER_LENGTH).toBe(Array.from(PRUNE_MARKER).length)
  })
})
