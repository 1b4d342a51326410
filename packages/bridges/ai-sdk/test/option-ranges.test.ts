import type { NumberKind } from '@warmfold/test-utils'
import { badNumbers, refusal, withValue } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { warmfoldMiddleware } from '../src/index.ts'

const BASE = { contextWindow: 8_000 }

/** Every numeric option (its own and the engine keys it takes), its kind, and what its narrower range adds. */
const KEYS: ReadonlyArray<readonly [key: string, kind: NumberKind, extra: readonly number[]]> = [
  ['contextWindow', 'integer', [0]],
  ['backOffCalls', 'integer', []],
  ['providerToleranceTokens', 'integer', []],
  ['background.startRatio', 'share', [0, 1]],
  ['background.maxWaitMs', 'milliseconds', []],
  ['audit.maxDropped', 'integer', []],
  ['artifactTrail.maxTokens', 'integer', [0]],
  ['thresholdRatio', 'share', [0]],
  ['retainRatio', 'share', [0, 1]],
  ['retainTokens', 'integer', []],
  ['headroomTokens', 'integer', []],
  ['maxTokens', 'integer', [0]],
  ['summaryMarginRatio', 'share', [1]],
  ['summaryBudget.retries', 'integer', []],
  ['summaryDeadlineMs', 'milliseconds', []],
]

const CASES = KEYS.flatMap(([key, kind, extra]) => [
  ...badNumbers(kind).map(({ value, shown }) => [key, value, shown] as const),
  ...extra.map((value) => [key, value, String(value)] as const),
])

describe('warmfoldMiddleware: every numeric option has a range', () => {
  it.each(CASES)('refuses %s = %s, naming the option and the value', (key, value, shown) => {
    const message = refusal(() => warmfoldMiddleware(withValue(BASE, key, value)), key, shown)
    expect(message).toMatch(/^warmfoldMiddleware options: /)
  })
})
