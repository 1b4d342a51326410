import { afterEach, describe, expect, it } from 'vitest'
import type { Harness, Kind } from './fixture.ts'
import { mount } from './fixture.ts'
import { anthropicStream, chatStream } from './sse.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.finish()
})

async function harness(kind: Kind, model: Record<string, unknown> = {}): Promise<Harness> {
  const created = await mount(
    kind,
    () =>
      kind === 'compat'
        ? { sse: chatStream('gpt-test', { text: 'ok' }) }
        : { sse: anthropicStream({ blocks: [{ type: 'text', text: 'ok' }] }), done: false },
    { maxRetries: 0 },
    model,
  )
  harnesses.push(created)
  return created
}

// The fixture's Anthropic effort `high` enables thinking with budgetTokens 1024; `off` adds nothing.
describe('maxTokens and the Anthropic thinking budget', () => {
  it('advertises the budget each effort enables as its output reserve, on Anthropic models only', async () => {
    const anthropic = await harness('anthropic')
    expect((await anthropic.ctx.llm.resolveModelInfo('ai', 'main')).reasoning).toEqual({
      efforts: ['off', 'high'],
      defaultEffort: 'off',
      outputReserveTokens: { high: 1024 },
    })
    // thinking enabled without budgetTokens: the provider's own 1024.
    const implicit = await harness('anthropic', {
      effortOptions: { high: { anthropic: { thinking: { type: 'enabled' } } } },
    })
    expect((await implicit.ctx.llm.resolveModelInfo('ai', 'main')).reasoning?.outputReserveTokens).toEqual({
      high: 1024,
    })
    const compat = await harness('compat')
    expect((await compat.ctx.llm.resolveModelInfo('ai', 'main')).reasoning).toEqual({
      efforts: ['off', 'high'],
      defaultEffort: 'off',
    })
  })

  it('sends max_tokens = maxTokens, thinking included, as the direct Anthropic adapter does (the provider adds the budget to maxOutputTokens)', async () => {
    const server = await harness('anthropic')
    await server.collect({ reasoningEffort: 'high', maxTokens: 3000 })
    await server.collect({ reasoningEffort: 'off', maxTokens: 3000 })
    expect(server.server.requests.map((request) => [request.json.max_tokens, request.json.thinking])).toEqual([
      [3000, { type: 'enabled', budget_tokens: 1024 }],
      [3000, undefined],
    ])
  })

  it('refuses a maxTokens at or below the budget, naming both numbers, and sends nothing', async () => {
    const server = await harness('anthropic')
    const error = await server.failure({ reasoningEffort: 'high', maxTokens: 1024 })
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', provider: 'ai', retryable: false })
    expect(error.message).toBe(
      'ai/main: maxTokens 1024 is not above the 1024 output tokens reasoningEffort "high" reserves for reasoning (providerOptions.anthropic.thinking.budgetTokens of effort "high"); ' +
        'the provider would reject the request or spend the whole cap on reasoning. Raise maxTokens above 1024, or choose a lower effort',
    )
    expect(server.server.requests).toHaveLength(0)
    // Another provider's effort options reserve nothing: the same cap is sent as it is.
    const compat = await harness('compat')
    await compat.collect({ reasoningEffort: 'high', maxTokens: 1024 })
    expect(compat.server.requests[0]!.json.max_tokens).toBe(1024)
  })
})
