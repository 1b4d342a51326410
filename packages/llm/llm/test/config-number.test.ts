import type { NumberKind } from '@warmfold/test-utils'
import { badNumbers, refusal } from '@warmfold/test-utils'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import {
  integerRange,
  integerSchema,
  MAX_TIMER_MS,
  millisecondsRange,
  millisecondsSchema,
  numberProblem,
  shareSchema,
  showValue,
  strictConfig,
} from '../src/index.ts'
import { attemptLimitsSchema } from '../src/adapter/index.ts'

const parse = strictConfig(
  'Owner',
  Schema.object({
    ms: millisecondsSchema(),
    count: integerSchema(1),
    share: shareSchema(),
    ratio: Schema.union([Schema.const('adaptive'), Schema.number()]),
    nested: Schema.object({ waitMs: millisecondsSchema() }),
    byName: Schema.dict(millisecondsSchema(1)),
    list: Schema.array(Schema.object({ tokens: integerSchema() })),
    anything: Schema.any(),
    ...attemptLimitsSchema(1000),
  }),
)

const KEYS: ReadonlyArray<readonly [key: string, config: (value: number) => unknown, kind: NumberKind]> = [
  ['ms', (value) => ({ ms: value }), 'milliseconds'],
  ['count', (value) => ({ count: value }), 'integer'],
  ['share', (value) => ({ share: value }), 'share'],
  ['nested.waitMs', (value) => ({ nested: { waitMs: value } }), 'milliseconds'],
  ['byName.anthropic', (value) => ({ byName: { anthropic: value } }), 'milliseconds'],
  ['byName.gpt-5', (value) => ({ byName: { 'gpt-5': value } }), 'milliseconds'],
  ['list[1].tokens', (value) => ({ list: [{ tokens: 1 }, { tokens: value }] }), 'integer'],
  ['timeoutMs', (value) => ({ timeoutMs: value }), 'milliseconds'],
  ['deadlineMs', (value) => ({ deadlineMs: value }), 'milliseconds'],
  ['maxRetries', (value) => ({ maxRetries: value }), 'integer'],
  ['retryBaseMs', (value) => ({ retryBaseMs: value }), 'milliseconds'],
]

const CASES = KEYS.flatMap(([key, config, kind]) =>
  badNumbers(kind).map(({ value, shown }) => [key, value, shown, config] as const),
)

describe('strictConfig and the shared number schemas', () => {
  it.each(CASES)('refuses %s = %s, naming the key and the value', (key, _value, shown, config) => {
    const message = refusal(() => parse(config(_value)), key, shown)
    expect(message).toMatch(/^Owner config: /)
  })

  it('refuses NaN and Infinity inside a union with a number, by name', () => {
    expect(() => parse({ ratio: Number.NaN })).toThrow('Owner config: ratio must be a finite number, got NaN')
    expect(() => parse({ ratio: Number.NEGATIVE_INFINITY })).toThrow(
      'Owner config: ratio must be a finite number, got -Infinity',
    )
    expect(parse({ ratio: 'adaptive' }).ratio).toBe('adaptive')
  })

  it('does not look into what the schema does not type as a number (a live object, a profile)', () => {
    expect(parse({ anything: { ttlMs: Number.POSITIVE_INFINITY, nested: [Number.NaN] } }).anything).toEqual({
      ttlMs: Number.POSITIVE_INFINITY,
      nested: [Number.NaN],
    })
  })

  it("accepts each bound itself: 0 and Node's timer limit", () => {
    expect(parse({ ms: 0, count: 1, share: 1, timeoutMs: MAX_TIMER_MS, retryBaseMs: 0 })).toMatchObject({
      ms: 0,
      count: 1,
      share: 1,
      timeoutMs: 2_147_483_647,
    })
  })
})

describe('numberProblem and showValue', () => {
  it('names the key, the range and the value as it is (NaN, not null)', () => {
    expect(numberProblem('leaseMs', Number.NaN, millisecondsRange(100))).toBe(
      "leaseMs must be an integer from 100 to 2147483647 (milliseconds; the most is Node's timer limit), got NaN",
    )
    expect(numberProblem('ratio', 0, { min: 0, max: 1, minExclusive: true })).toBe(
      'ratio must be a number in (0, 1], got 0',
    )
    expect(numberProblem('ratio', 1, { min: 0, max: 1, maxExclusive: true })).toBe(
      'ratio must be a number in [0, 1), got 1',
    )
    expect(numberProblem('count', '3', integerRange())).toBe('count must be an integer from 0 to 2147483647, got "3"')
    expect(numberProblem('count', 3, integerRange())).toBeUndefined()
    expect(numberProblem('ratio', 0.5, { min: 0, max: 1, minExclusive: true })).toBeUndefined()
  })

  it('shows a value as an error should', () => {
    expect([Number.NaN, Number.POSITIVE_INFINITY, -0, 1.5, 'x', undefined, null, () => 1, 2n].map(showValue)).toEqual([
      'NaN',
      'Infinity',
      '-0',
      '1.5',
      '"x"',
      'undefined',
      'null',
      'a function',
      '2n',
    ])
  })
})
