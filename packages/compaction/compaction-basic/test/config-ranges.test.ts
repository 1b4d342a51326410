import type { NumberKind } from '@warmfold/test-utils'
import { badNumbers, refusal, withValue } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { parseCompactionConfig } from '../src/engine-parts.ts'
import { mountEngine } from './engine-fixture.ts'

/** Every numeric key of the engine's config, its kind, and the values its narrower range adds. */
const KEYS: ReadonlyArray<readonly [key: string, kind: NumberKind, extra: readonly number[]]> = [
  ['thresholdRatio', 'share', [0]],
  ['retainRatio', 'share', [0, 1]],
  ['retainTokens', 'integer', []],
  ['headroomTokens', 'integer', []],
  ['maxTokens', 'integer', [0]],
  ['summaryMarginRatio', 'share', [1]],
  ['compactionRetries', 'integer', []],
  ['maxOverflowRetries', 'integer', []],
  ['summaryBudget.retries', 'integer', []],
  ['summaryDeadlineMs', 'milliseconds', []],
  ['keepUserMessages.maxTokens', 'integer', [0]],
  ['idle.minPressure', 'share', []],
  ['idle.marginMs', 'milliseconds', []],
  ['background.startRatio', 'share', [0, 1]],
  ['background.maxWaitMs', 'milliseconds', []],
  ['audit.maxDropped', 'integer', []],
  ['artifactTrail.maxTokens', 'integer', [0]],
]

const CASES = KEYS.flatMap(([key, kind, extra]) => [
  ...badNumbers(kind).map(({ value, shown }) => [key, value, shown] as const),
  ...extra.map((value) => [key, value, String(value)] as const),
])

describe('every numeric key of the engine config has a range, checked at parse time', () => {
  it.each(CASES)('refuses %s = %s, naming the key and the value', (key, value, shown) => {
    const message = refusal(() => parseCompactionConfig(withValue({}, key, value)), key, shown)
    expect(message).toMatch(/^BasicCompactionEngine config: /)
  })

  it.each([Number.NaN, 1, 0.5, Number.POSITIVE_INFINITY, 2 ** 31])(
    'refuses summaryBudget.growth = %s (a finite factor above 1, at most 2^31 − 1)',
    (value) => {
      refusal(
        () => parseCompactionConfig(withValue({}, 'summaryBudget.growth', value)),
        'summaryBudget.growth',
        String(value),
      )
    },
  )

  it('names the override too: modelPolicies[0].thresholdRatio = NaN', () => {
    expect(() =>
      parseCompactionConfig({ modelPolicies: [{ provider: 'p', model: 'm', thresholdRatio: NaN }] }),
    ).toThrow('BasicCompactionEngine config: modelPolicies[0].thresholdRatio must be a finite number, got NaN')
  })

  it('accepts each bound itself', () => {
    expect(() =>
      parseCompactionConfig({
        thresholdRatio: 1,
        summaryMarginRatio: 0,
        summaryDeadlineMs: 2_147_483_647,
        idle: { minPressure: 0, marginMs: 2_147_483_647 },
        background: { maxWaitMs: 2_147_483_647 },
        audit: { maxDropped: 0 },
        retainTokens: 2_147_483_647 - 1,
        maxTokens: 2_147_483_647,
      }),
    ).not.toThrow()
  })
})

describe('the two configs measured breaking compaction are refused at load', () => {
  it('thresholdRatio: NaN (every comparison with it is false, so every turn folded)', async () => {
    expect(() => parseCompactionConfig({ thresholdRatio: NaN })).toThrow(
      'BasicCompactionEngine config: thresholdRatio must be a finite number, got NaN',
    )
    const engine = await mountEngine({ engine: { thresholdRatio: NaN } })
    expect(engine.errors.map(String).join('\n')).toContain('thresholdRatio must be a finite number, got NaN')
    expect(engine.ctx.get('compaction')).toBeUndefined()
    await engine.dispose()
  })

  it.each([
    [2 ** 31, 'aborted every summary call after 1 ms'],
    [2 ** 32, 'threw from AbortSignal.timeout'],
  ])('summaryDeadlineMs: %s (it %s)', async (value) => {
    expect(() => parseCompactionConfig({ summaryDeadlineMs: value })).toThrow(
      `BasicCompactionEngine config: $.summaryDeadlineMs expected number <= 2147483647 but got ${value}`,
    )
    const engine = await mountEngine({ engine: { summaryDeadlineMs: value } })
    expect(engine.errors.map(String).join('\n')).toContain(
      `summaryDeadlineMs expected number <= 2147483647 but got ${value}`,
    )
    expect(engine.ctx.get('compaction')).toBeUndefined()
    await engine.dispose()
  })
})
