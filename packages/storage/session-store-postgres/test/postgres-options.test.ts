import { badNumbers, refusal } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { postgresSessionStore } from '../src/index.ts'

// Nothing here connects: the options are checked when the store is made.
const URL = 'postgres://user:secret@127.0.0.1:9/app'

const CASES = [
  ...badNumbers('milliseconds').map(({ value, shown }) => ['leaseMs', value, shown] as const),
  ['leaseMs', 99, '99'] as const,
  ...badNumbers('integer').map(({ value, shown }) => ['maxConnections', value, shown] as const),
  ['maxConnections', 0, '0'] as const,
]

describe('postgresSessionStore: every numeric option has a range', () => {
  it.each(CASES)('refuses %s = %s, naming the option and the value', (key, value, shown) => {
    const message = refusal(() => postgresSessionStore({ url: URL, [key]: value }), key, shown)
    expect(message).toMatch(/^postgresSessionStore: /)
    expect(message).not.toContain('secret')
  })
})
