import { describe, expect, it } from 'vitest'
import { LlmError } from '../src/index.ts'
import { checkOutputReserve, collectOutputReserves } from '../src/output-reserve.ts'

describe('collectOutputReserves', () => {
  it('keeps the positive reserve of each effort, and is undefined when no effort reserves anything', () => {
    const budgets: Record<string, number> = { low: 2048, high: 8192, dynamic: -1 }
    expect(collectOutputReserves(['off', 'low', 'high', 'dynamic'], (effort) => budgets[effort] ?? 0)).toEqual({
      low: 2048,
      high: 8192,
    })
    expect(collectOutputReserves(['off', 'minimal'], () => 0)).toBeUndefined()
  })
})

describe('checkOutputReserve', () => {
  const call = { provider: 'anthropic', model: 'claude', reasoningEffort: 'high' }

  it('passes a cap above the reserve, no cap, and no reserve', () => {
    expect(() => checkOutputReserve({ ...call, maxTokens: 8193 }, 8192, 'thinkingBudgets.high')).not.toThrow()
    expect(() => checkOutputReserve(call, 8192, 'thinkingBudgets.high')).not.toThrow()
    expect(() => checkOutputReserve({ ...call, maxTokens: 1 }, 0, 'none')).not.toThrow()
  })

  it('refuses a cap at or below the reserve with INVALID_REQUEST naming both numbers, the effort and where the reserve comes from', () => {
    for (const maxTokens of [8192, 100]) {
      let thrown: unknown
      try {
        checkOutputReserve({ ...call, maxTokens }, 8192, 'thinkingBudgets.high')
      } catch (error) {
        thrown = error
      }
      expect(LlmError.isInstance(thrown)).toBe(true)
      expect(thrown).toMatchObject({
        code: 'INVALID_REQUEST',
        provider: 'anthropic',
        retryable: false,
        message: `anthropic/claude: maxTokens ${maxTokens} is not above the 8192 output tokens reasoningEffort "high" reserves for reasoning (thinkingBudgets.high); the provider would reject the request or spend the whole cap on reasoning. Raise maxTokens above 8192, or choose a lower effort`,
      })
    }
  })
})
