import { checkPruneBudget, codePointLength, PRUNE_MARKER } from '@warmfold/compaction-tool-result-pruner'
import { createToolResultMessage } from '@warmfold/llm'
import { estimateMessageTokens } from '@warmfold/token-meter'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { WorkloadOptions } from '../src/index.ts'
import { DEFAULT_STRATEGIES, EFFORTS, PRUNERS, STRATEGIES } from '../src/index.ts'
import { resolveWorkload } from '../src/workload-options.ts'

/** The derived numbers, written out from the documented rules. */
function derived(window: number) {
  const stepTokens = Math.floor(window / 24)
  const stepChars = stepTokens * 4
  return {
    stepTokens,
    stepChars,
    proseChars: Math.round(stepChars * 0.45),
    resultChars: Math.floor((stepChars * 0.45) / 4) * 4,
    defaultMaxTokens: Math.floor(window / 16),
  }
}

describe('resolveWorkload', () => {
  it('applies the documented defaults', () => {
    const workload = resolveWorkload()
    const numbers = derived(128000)
    expect(workload).toMatchObject({
      window: 128000,
      steps: 60,
      effort: 'max',
      temperature: undefined,
      stop: undefined,
      pruner: 'rewrite-only',
      strategy: 'warmfold',
      profile: 'bytes',
      summaryRoute: undefined,
      turns: 1,
      idleSeconds: 0,
      stepSeconds: 15,
      turnSteps: [60],
      stepTokens: 5333,
      proseChars: numbers.proseChars,
      resultChars: numbers.resultChars,
      oversizedResultChars: numbers.resultChars + 2,
      defaultMaxTokens: 8000,
      engine: { thresholdRatio: 0.8, retainRatio: 0.16, headroomTokens: 8000, compactionRetries: 1, maxTokens: 8000 },
    })
    expect(resolveWorkload({})).toEqual(workload)
    expect(Object.isFrozen(workload)).toBe(true)
  })

  it.each([4800, 32000, 128000, 512000, 1_000_003])(
    'window %i: stepTokens = window / 24, a result is 45 % of a step in whole tokens, output caps = window / 16',
    (window) => {
      const workload = resolveWorkload({ window })
      const numbers = derived(window)
      expect(workload.stepTokens).toBe(numbers.stepTokens)
      expect(workload.proseChars).toBe(numbers.proseChars)
      expect(workload.resultChars).toBe(numbers.resultChars)
      expect(workload.resultChars % 4).toBe(0)
      expect(workload.resultChars).toBeLessThanOrEqual(numbers.stepChars * 0.45)
      expect(workload.resultChars).toBeGreaterThan(numbers.stepChars * 0.45 - 4)
      expect(workload.defaultMaxTokens).toBe(numbers.defaultMaxTokens)
      expect(workload.engine.headroomTokens).toBe(numbers.defaultMaxTokens)
      expect(workload.engine.maxTokens).toBe(Math.min(8192, numbers.defaultMaxTokens))
    },
  )

  it('rewrite-only: threshold = R + 1, oversized = R + 2, head + marker + tail = threshold, tail = min(256, R / 8)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 4800, max: 2_000_000 }), (window) => {
        const workload = resolveWorkload({ window, pruner: 'rewrite-only' })
        const budget = workload.prunerBudget!
        const result = workload.resultChars
        expect(budget.thresholdChars).toBe(result + 1)
        expect(workload.oversizedResultChars).toBe(result + 2)
        expect(budget.tailChars).toBe(Math.min(256, Math.floor(result / 8)))
        expect(budget.headChars).toBeGreaterThanOrEqual(0)
        expect(budget.headChars + codePointLength(PRUNE_MARKER) + budget.tailChars).toBe(budget.thresholdChars)
        expect(() => checkPruneBudget(budget)).not.toThrow()
        // A normal result is within budget and an oversized one is over it ...
        expect(result).toBeLessThanOrEqual(budget.thresholdChars)
        expect(workload.oversizedResultChars).toBeGreaterThan(budget.thresholdChars)
        // ... and pruning it saves one character, which the heuristic meter prices at 0 tokens.
        const original = estimateMessageTokens(createToolResultMessage('c', 'x'.repeat(workload.oversizedResultChars)))
        const pruned = estimateMessageTokens(createToolResultMessage('c', 'x'.repeat(budget.thresholdChars)))
        expect(pruned).toBe(original)
      }),
      { numRuns: 200 },
    )
  })

  it('default pruner: the pruner defaults and oversized results of max(3R, 10240); none: no pruner', () => {
    for (const window of [32000, 128000, 512000]) {
      const result = derived(window).resultChars
      const withDefaults = resolveWorkload({ window, pruner: 'default' })
      expect(withDefaults.prunerBudget).toEqual({ thresholdChars: 8192, headChars: 4096, tailChars: 1024 })
      expect(withDefaults.oversizedResultChars).toBe(Math.max(3 * result, 10240))
      const without = resolveWorkload({ window, pruner: 'none' })
      expect(without.prunerBudget).toBeUndefined()
      expect(without.oversizedResultChars).toBe(Math.max(3 * result, 10240))
    }
  })

  it('passes the envelope and route options through', () => {
    const stop = ['</answer>']
    const workload = resolveWorkload({
      effort: 'low',
      temperature: 0,
      stop,
      strategy: 'cold',
      profile: 'blocks:128:1024',
      summaryRoute: 'cheap/small',
      stepSeconds: 0,
      steps: 3,
    })
    expect(workload).toMatchObject({
      effort: 'low',
      temperature: 0,
      stop: ['</answer>'],
      strategy: 'cold',
      profile: 'blocks:128:1024',
      summaryRoute: { provider: 'cheap', model: 'small' },
      stepSeconds: 0,
      steps: 3,
    })
    expect(workload.stop).not.toBe(stop)
    expect(Object.isFrozen(workload.stop)).toBe(true)
  })

  it('splits the steps across the turns as evenly as possible, earlier turns taking the remainder', () => {
    expect(resolveWorkload({ steps: 10, turns: 3 }).turnSteps).toEqual([4, 3, 3])
    expect(resolveWorkload({ steps: 6, turns: 6 }).turnSteps).toEqual([1, 1, 1, 1, 1, 1])
    expect(resolveWorkload({ steps: 7, turns: 2, idleSeconds: 900, stepSeconds: 30 })).toMatchObject({
      turns: 2,
      idleSeconds: 900,
      stepSeconds: 30,
      turnSteps: [4, 3],
    })
  })

  it('lists the accepted values', () => {
    expect(STRATEGIES).toEqual(['warmfold', 'legacy', 'cold', 'transcript', 'toolless', 'long-instruction'])
    expect(DEFAULT_STRATEGIES).toEqual(['warmfold', 'legacy', 'cold'])
    expect(PRUNERS).toEqual(['rewrite-only', 'default', 'none'])
    expect(EFFORTS).toEqual(['low', 'high', 'max'])
  })

  it.each([
    [{ window: 4799 }, 'workload window must be an integer ≥ 4800 tokens, got 4799'],
    [{ window: 32000.5 }, 'workload window must be an integer ≥ 4800 tokens, got 32000.5'],
    [{ window: Number.NaN }, 'workload window must be an integer ≥ 4800 tokens, got NaN'],
    [{ steps: 0 }, 'workload steps must be a positive integer, got 0'],
    [{ steps: 2.5 }, 'workload steps must be a positive integer, got 2.5'],
    [{ effort: 'medium' }, 'workload effort must be one of low, high, max, got "medium"'],
    [{ pruner: 'all' }, 'workload pruner must be one of rewrite-only, default, none, got "all"'],
    [
      { strategy: 'hot' },
      'workload strategy must be one of warmfold, legacy, cold, transcript, toolless, long-instruction, got "hot"',
    ],
    [
      { profile: 'lru' },
      'cache profile "lru" is not valid; use bytes[:ttl=S] | blocks:N[:MIN][:ttl=S] | anthropic[:1h|:ttl=S] | deepseek[:ttl=S] (N ≥ 1, S = seconds > 0)',
    ],
    [
      { profile: 'blocks:0' },
      'cache profile "blocks:0" is not valid; use bytes[:ttl=S] | blocks:N[:MIN][:ttl=S] | anthropic[:1h|:ttl=S] | deepseek[:ttl=S] (N ≥ 1, S = seconds > 0)',
    ],
    [{ temperature: Number.POSITIVE_INFINITY }, 'workload temperature must be a finite number, got Infinity'],
    [{ stop: '</answer>' }, 'workload stop must be an array of strings, got "</answer>"'],
    [{ stop: [1] }, 'workload stop must be an array of strings, got [1]'],
    [{ summaryRoute: 'just-a-model' }, 'workload summaryRoute must be provider/model, got "just-a-model"'],
    [{ summaryRoute: 'a/b/c' }, 'workload summaryRoute must be provider/model, got "a/b/c"'],
    [{ summaryRoute: '/model' }, 'workload summaryRoute must be provider/model, got "/model"'],
    [{ stepSeconds: -1 }, 'workload stepSeconds must be a finite number ≥ 0, got -1'],
    [{ stepSeconds: Number.NaN }, 'workload stepSeconds must be a finite number ≥ 0, got NaN'],
    [{ idleSeconds: -0.5 }, 'workload idleSeconds must be a finite number ≥ 0, got -0.5'],
    [{ idleSeconds: Number.POSITIVE_INFINITY }, 'workload idleSeconds must be a finite number ≥ 0, got Infinity'],
    [{ turns: 0 }, 'workload turns must be an integer from 1 to steps (60), got 0'],
    [{ turns: 1.5 }, 'workload turns must be an integer from 1 to steps (60), got 1.5'],
    [{ steps: 3, turns: 4 }, 'workload turns must be an integer from 1 to steps (3), got 4'],
  ])('rejects %j with a TypeError naming the option and what it accepts', (options, message) => {
    expect(() => resolveWorkload(options as unknown as WorkloadOptions)).toThrow(TypeError)
    expect(() => resolveWorkload(options as unknown as WorkloadOptions)).toThrow(message)
  })
})
