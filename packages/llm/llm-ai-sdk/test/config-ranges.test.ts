import type { NumberKind, RecordingServer } from '@warmfold/test-utils'
import { badNumbers, refusal, withValue } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { parseAiSdkConfig } from '../src/index.ts'
import { modelFor } from './fixture.ts'

// Nothing here sends a request: the model only needs an address.
const server = { baseURL: 'http://127.0.0.1:9/v1' } as RecordingServer
const BASE = { models: { m: { model: modelFor('compat', server), contextWindow: 1000 } } }

/** Every numeric key (its path, and its name in the error), its kind, and the values its narrower range adds. */
const KEYS: ReadonlyArray<readonly [path: string, key: string, kind: NumberKind, extra: readonly number[]]> = [
  ['timeoutMs', 'timeoutMs', 'milliseconds', [0]],
  ['deadlineMs', 'deadlineMs', 'milliseconds', [0]],
  ['maxRetries', 'maxRetries', 'integer', []],
  ['retryBaseMs', 'retryBaseMs', 'milliseconds', []],
  ['models.m.contextWindow', 'models["m"].contextWindow', 'integer', [0]],
  ['models.m.defaultMaxTokens', 'models["m"].defaultMaxTokens', 'integer', [0]],
  ['models.m.cacheTtlMs', 'models["m"].cacheTtlMs', 'milliseconds', [0]],
]

const CASES = KEYS.flatMap(([path, key, kind, extra]) => [
  ...badNumbers(kind).map(({ value, shown }) => [key, path, value, shown] as const),
  ...extra.map((value) => [key, path, value, String(value)] as const),
])

describe('AiSdkAdapter: every numeric config key has a range', () => {
  it.each(CASES)('refuses %s (%s) = %s, naming the key and the value', (key, path, value, shown) => {
    const message = refusal(() => parseAiSdkConfig(withValue(BASE, path, value)), key, shown)
    expect(message).toMatch(/^AiSdkAdapter config: /)
  })
})
