import type { NumberKind } from '@warmfold/test-utils'
import { badNumbers, refusal, withValue } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { CacheLedger } from '../src/index.ts'

const KEYS: ReadonlyArray<readonly [key: string, kind: NumberKind, extra: readonly number[]]> = [
  ['cacheTtlMs.anthropic', 'milliseconds', [0]],
  ['providerToleranceTokens', 'integer', []],
  ['forgetAfterMs', 'milliseconds', [0]],
]

const CASES = KEYS.flatMap(([key, kind, extra]) => [
  ...badNumbers(kind).map(({ value, shown }) => [key, value, shown] as const),
  ...extra.map((value) => [key, value, String(value)] as const),
])

describe('CacheLedger: every numeric config key has a range', () => {
  it.each(CASES)('refuses %s = %s, naming the key and the value', (key, value, shown) => {
    const message = refusal(() => CacheLedger.Config(withValue({}, key, value)), key, shown)
    expect(message).toMatch(/^CacheLedger config: /)
  })
})
