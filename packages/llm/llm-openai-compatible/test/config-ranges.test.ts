import type { NumberKind } from '@warmfold/test-utils'
import { badNumbers, refusal, withValue } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { parseOpenAICompatibleConfig } from '../src/index.ts'

const BASE = { provider: 'deepseek', baseURL: 'https://api.deepseek.com', models: { m: { contextWindow: 128000 } } }

/** Every numeric key, its kind, and the values its narrower range adds. */
const KEYS: ReadonlyArray<readonly [key: string, kind: NumberKind, extra: readonly number[]]> = [
  ['timeoutMs', 'milliseconds', [0]],
  ['deadlineMs', 'milliseconds', [0]],
  ['maxRetries', 'integer', []],
  ['retryBaseMs', 'milliseconds', []],
  ['maxRetryWaitMs', 'milliseconds', []],
  ['models.m.contextWindow', 'integer', [0]],
  ['models.m.defaultMaxTokens', 'integer', [0]],
  ['models.m.cacheTtlMs', 'milliseconds', [0]],
]

const CASES = KEYS.flatMap(([key, kind, extra]) => [
  ...badNumbers(kind).map(({ value, shown }) => [key, value, shown] as const),
  ...extra.map((value) => [key, value, String(value)] as const),
])

describe('OpenAICompatibleAdapter: every numeric config key has a range', () => {
  it.each(CASES)('refuses %s = %s, naming the key and the value', (key, value, shown) => {
    const message = refusal(() => parseOpenAICompatibleConfig(withValue(BASE, key, value)), key, shown)
    expect(message).toMatch(/^OpenAICompatibleAdapter config: /)
  })

  it("accepts Node's timer limit itself", () => {
    const limit = 2_147_483_647
    expect(parseOpenAICompatibleConfig({ ...BASE, timeoutMs: limit, deadlineMs: limit })).toMatchObject({
      timeoutMs: limit,
      deadlineMs: limit,
    })
  })
})
