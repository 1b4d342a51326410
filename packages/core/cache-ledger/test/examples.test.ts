import { recordCordisPrints } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { main as usage } from '../examples/usage.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test).
describe('README examples run', () => {
  it('usage: logs an observation per request and warns about a summary call that dropped the effort', async () => {
    const { result, printed } = await recordCordisPrints(usage)
    expect(printed).toEqual([])
    expect(result.causes).toEqual(['none', 'none', 'envelope'])
    expect(result.divergence).toEqual({ part: 'envelope', field: 'reasoningEffort', charOffset: 0 })
    expect(result.guard).toEqual({
      action: 'warn',
      provider: 'deepseek',
      model: 'deepseek-v4-flash',
      divergence: { part: 'envelope', field: 'reasoningEffort', charOffset: 0 },
      reason:
        "the summary call's reasoningEffort differs from the last conversation request's, so it lands in another cache family",
    })
    expect(result.uncached).toBe(4040)
  })
})
