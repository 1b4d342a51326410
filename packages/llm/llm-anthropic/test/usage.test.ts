import { promptTokensOf } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { mapUsage, mergeUsage } from '../src/map-usage.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { mountAdapter } from './adapter-fixture.ts'
import { streamReply } from './sse-script.ts'

// Payloads in the shapes of Anthropic's streaming and prompt-caching docs.
const START_WITH_SPLIT = {
  input_tokens: 21,
  cache_creation_input_tokens: 1800,
  cache_read_input_tokens: 14000,
  cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 1200 },
  output_tokens: 2,
  service_tier: 'standard',
}
const DELTA_WITH_NULLS = {
  input_tokens: null,
  cache_creation_input_tokens: null,
  cache_read_input_tokens: null,
  output_tokens: 503,
  output_tokens_details: { thinking_tokens: 320 },
  server_tool_use: null,
}

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

describe('usage mapping', () => {
  it('maps cache reads, writes (5m + 1h, split kept in raw) and uncached input into disjoint buckets', () => {
    const usage = mapUsage(mergeUsage(START_WITH_SPLIT, DELTA_WITH_NULLS))!
    expect(usage).toEqual({
      inputTokens: 21,
      cacheReadTokens: 14000,
      cacheWriteTokens: 1800,
      outputTokens: 503,
      reasoningTokens: 320,
      raw: { ...START_WITH_SPLIT, output_tokens: 503, output_tokens_details: { thinking_tokens: 320 } },
    })
    expect(promptTokensOf(usage)).toBe(21 + 14000 + 1800)
    expect((usage.raw as typeof START_WITH_SPLIT).cache_creation).toEqual({
      ephemeral_5m_input_tokens: 600,
      ephemeral_1h_input_tokens: 1200,
    })
  })

  it('takes message_delta counts as cumulative: they replace, never add', () => {
    const merged = mergeUsage({ input_tokens: 30, output_tokens: 1 }, { input_tokens: 31, output_tokens: 90 })
    expect(mapUsage(merged)).toMatchObject({ inputTokens: 31, outputTokens: 90 })
    expect(mapUsage(mergeUsage(mergeUsage(undefined, { output_tokens: 5 }), { output_tokens: 9 }))).toMatchObject({
      outputTokens: 9,
    })
  })

  it('leaves absent and null fields undefined, never 0', () => {
    const usage = mapUsage(mergeUsage({ input_tokens: 25, output_tokens: 1 }, { output_tokens: 7 }))!
    expect(usage).toEqual({ inputTokens: 25, outputTokens: 7, raw: { input_tokens: 25, output_tokens: 7 } })
    expect(usage.cacheReadTokens).toBeUndefined()
    expect(usage.cacheWriteTokens).toBeUndefined()
    expect(usage.reasoningTokens).toBeUndefined()
    const nulls = mapUsage({
      input_tokens: null,
      cache_read_input_tokens: null,
      cache_creation_input_tokens: null,
      output_tokens: 3,
      output_tokens_details: null,
    })!
    expect(nulls).toEqual({
      outputTokens: 3,
      raw: {
        input_tokens: null,
        cache_read_input_tokens: null,
        cache_creation_input_tokens: null,
        output_tokens: 3,
        output_tokens_details: null,
      },
    })
    expect(promptTokensOf(nulls)).toBeUndefined()
    expect(mapUsage(mergeUsage(undefined, undefined))).toBeUndefined()
  })

  it('parses the usage of message_start and message_delta from a real stream', async () => {
    const adapter = await mountAdapter(() =>
      streamReply({
        blocks: [{ type: 'text', text: 'ok' }],
        startUsage: START_WITH_SPLIT,
        deltaUsage: DELTA_WITH_NULLS,
      }),
    )
    harnesses.push(adapter)
    const result = await adapter.ctx.llm.generate({ provider: 'anthropic', model: 'claude-test', messages: [] })
    expect(result.usage).toMatchObject({
      inputTokens: 21,
      cacheReadTokens: 14000,
      cacheWriteTokens: 1800,
      outputTokens: 503,
      reasoningTokens: 320,
    })
    expect(result.usage?.raw).toMatchObject({
      cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 1200 },
    })
    adapter.assertClean()
  })

  it('sends no usage chunk when the stream carried no usage', async () => {
    const adapter = await mountAdapter(() => ({
      kind: 'stream',
      events: [
        {
          event: 'message_start',
          data: {
            type: 'message_start',
            message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'claude-test' },
          },
        },
        { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn' } } },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
    }))
    harnesses.push(adapter)
    expect(await adapter.collect()).toEqual([{ type: 'finish', reason: 'stop' }])
  })
})
