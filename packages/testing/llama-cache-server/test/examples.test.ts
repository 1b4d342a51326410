import { describe, expect, it } from 'vitest'
import { main as usage } from '../examples/usage.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test).
describe('README examples run', { timeout: 30_000 }, () => {
  it("usage: the second request reuses the first one's prompt from the real KV cache, and the records agree", async () => {
    const { first, second, records } = await usage()
    expect(first.usage.prompt_tokens_details.cached_tokens).toBe(0)
    expect(first.timings.prompt_n).toBe(first.usage.prompt_tokens)
    // The second prompt extends the first up to the end of its user text: that part is reused.
    expect(second.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0)
    expect(second.usage.prompt_tokens_details.cached_tokens).toBeLessThan(first.usage.prompt_tokens)
    expect(second.timings.prompt_n).toBe(second.usage.prompt_tokens - second.usage.prompt_tokens_details.cached_tokens)
    expect(records.map((record) => [record.promptTokens, record.cachedTokens, record.evaluatedTokens])).toEqual([
      [first.usage.prompt_tokens, 0, first.timings.prompt_n],
      [second.usage.prompt_tokens, second.usage.prompt_tokens_details.cached_tokens, second.timings.prompt_n],
    ])
  })
})
