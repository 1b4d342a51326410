import { afterEach, describe, expect, it } from 'vitest'
import { mapUsage } from '../src/map-usage.ts'
import type { Harness } from './fixture.ts'
import { mount, WIRE_MODEL } from './fixture.ts'
import { anthropicStream, chatStream, openaiUsage } from './sse.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.finish()
})

const usageOf = async (harness: Harness) => (await harness.collect()).find((chunk) => chunk.type === 'usage')

describe('usage over the wire', () => {
  it('chat completions: cached_tokens → cacheReadTokens, the rest → inputTokens, raw kept', async () => {
    const harness = await mount('compat', () => ({
      sse: chatStream(
        WIRE_MODEL.compat,
        { text: 'ok' },
        { ...openaiUsage(1000, 896, 12), completion_tokens_details: { reasoning_tokens: 4 } },
      ),
    }))
    harnesses.push(harness)
    expect(await usageOf(harness)).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 104,
        cacheReadTokens: 896,
        outputTokens: 12,
        reasoningTokens: 4,
        raw: { ...openaiUsage(1000, 896, 12), completion_tokens_details: { reasoning_tokens: 4 } },
      },
    })
  })

  it('chat completions without prompt_tokens_details: cache reads stay undefined (the provider says 0)', async () => {
    const harness = await mount('compat', () => ({
      sse: chatStream(WIRE_MODEL.compat, { text: 'ok' }, openaiUsage(50, undefined, 3)),
    }))
    harnesses.push(harness)
    const chunk = await usageOf(harness)
    expect(chunk).toEqual({
      type: 'usage',
      usage: { inputTokens: 50, outputTokens: 3, raw: openaiUsage(50, undefined, 3) },
    })
  })

  it('Anthropic: cache reads and writes from message_start, output from message_delta; absent cache fields stay undefined', async () => {
    const full = await mount('anthropic', () => ({
      sse: anthropicStream({
        blocks: [{ type: 'text', text: 'ok' }],
        startUsage: {
          input_tokens: 7,
          cache_read_input_tokens: 300,
          cache_creation_input_tokens: 40,
          output_tokens: 1,
        },
      }),
      done: false,
    }))
    harnesses.push(full)
    expect(await usageOf(full)).toMatchObject({
      usage: {
        inputTokens: 7,
        cacheReadTokens: 300,
        cacheWriteTokens: 40,
        outputTokens: 42,
        raw: expect.objectContaining({ input_tokens: 7 }),
      },
    })
    const bare = await mount('anthropic', () => ({
      sse: anthropicStream({
        blocks: [{ type: 'text', text: 'ok' }],
        startUsage: { input_tokens: 7, output_tokens: 1 },
      }),
      done: false,
    }))
    harnesses.push(bare)
    const usage = (await usageOf(bare)) as unknown as { usage: Record<string, unknown> }
    expect(usage.usage).toMatchObject({ inputTokens: 7, outputTokens: 42 })
    expect(usage.usage.cacheReadTokens).toBeUndefined()
    expect(usage.usage.cacheWriteTokens).toBeUndefined()
  })
})

describe('mapUsage', () => {
  it('keeps what another provider reports, leaves undefined what it does not, and has no raw when none came', () => {
    expect(
      mapUsage({
        inputTokens: { total: 10, noCache: 4, cacheRead: 6, cacheWrite: undefined },
        outputTokens: { total: 3, text: 3, reasoning: undefined },
        raw: { promptTokenCount: 10 },
      }),
    ).toEqual({ inputTokens: 4, cacheReadTokens: 6, outputTokens: 3, raw: { promptTokenCount: 10 } })
    expect(
      mapUsage({
        inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: undefined, text: undefined, reasoning: undefined },
      }),
    ).toEqual({})
    expect(mapUsage(undefined)).toBeUndefined()
  })
})
