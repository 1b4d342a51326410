import { badNumbers, refusal } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { ToolResultPruner } from '../src/index.ts'

const CASES = ['thresholdChars', 'headChars', 'tailChars'].flatMap((key) =>
  badNumbers('integer').map(({ value, shown }) => [key, value, shown] as const),
)

describe('ToolResultPruner: every numeric config key has a range', () => {
  it.each(CASES)('refuses %s = %s, naming the key and the value', (key, value, shown) => {
    const message = refusal(() => ToolResultPruner.Config({ [key]: value }), key, shown)
    expect(message).toMatch(/^ToolResultPruner config: /)
  })

  it('refuses thresholdChars = 0', () => {
    refusal(() => ToolResultPruner.Config({ thresholdChars: 0 }), 'thresholdChars', '0')
  })
})
