import type { TokenUsage } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { Dialect } from '../src/index.ts'
import { mapUsage } from '../src/map-usage.ts'
import type { AdapterHarness } from './fixture.ts'
import { finish, MODEL, mountAdapter, request } from './fixture.ts'
import type { ScriptedTurn } from './provider-streams.ts'
import {
  chunk,
  deepseekStream,
  deepseekUsage,
  llamacppStream,
  llamacppTimings,
  openaiStream,
  openaiUsage,
  usageChunk,
  vllmStream,
} from './provider-streams.ts'
import type { Reply } from '@warmfold/test-utils'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
})

const TURN: ScriptedTurn = { reasoning: 'Check the cache.', text: 'The cache is warm.' }

/** The usage `ctx.llm.generate` returns for one canned reply under `dialect`. */
async function usageOf(dialect: Dialect, reply: Reply): Promise<TokenUsage | undefined> {
  const harness = await mountAdapter(() => reply, { dialect })
  harnesses.push(harness)
  return (await harness.ctx.llm.generate(request(harness))).usage
}

/** The keys present on a usage object (an absent field must not even exist as `undefined`). */
function keys(usage: TokenUsage | undefined): string[] {
  return Object.keys(usage ?? {}).toSorted()
}

describe('usage parsing from recorded payloads', () => {
  it('DeepSeek: hit → cacheRead, miss → input, no cache writes; raw kept as sent', async () => {
    const sent = deepseekUsage(1920, 86, 300, 120)
    const usage = await usageOf('deepseek', { sse: deepseekStream(MODEL, TURN, sent) })
    expect(usage).toEqual({
      inputTokens: 86,
      cacheReadTokens: 1920,
      outputTokens: 300,
      reasoningTokens: 120,
      raw: sent,
    })
    expect(usage?.cacheWriteTokens).toBeUndefined()
  })

  it('DeepSeek: prefers the native fields over the cached_tokens mirror', () => {
    const usage = mapUsage(
      {
        prompt_tokens: 100,
        prompt_tokens_details: { cached_tokens: 7 },
        prompt_cache_hit_tokens: 64,
        prompt_cache_miss_tokens: 36,
      },
      undefined,
      'deepseek',
    )
    expect(usage).toMatchObject({ inputTokens: 36, cacheReadTokens: 64 })
  })

  it('DeepSeek: a missing miss count is prompt − hit; a missing prompt leaves input undefined', () => {
    expect(mapUsage({ prompt_tokens: 100, prompt_cache_hit_tokens: 64 }, undefined, 'deepseek')).toMatchObject({
      inputTokens: 36,
      cacheReadTokens: 64,
    })
    expect(keys(mapUsage({ prompt_cache_hit_tokens: 64 }, undefined, 'deepseek'))).toEqual(['cacheReadTokens', 'raw'])
  })

  it('OpenAI: cached_tokens → cacheRead, input = prompt − cached; reasoning tokens from completion details', async () => {
    const sent = openaiUsage(2006, 1920, 300, 192)
    const usage = await usageOf('openai', { sse: openaiStream(MODEL, TURN, sent) })
    expect(usage).toEqual({
      inputTokens: 86,
      cacheReadTokens: 1920,
      outputTokens: 300,
      reasoningTokens: 192,
      raw: sent,
    })
  })

  it('OpenAI (GPT-5.6+): cache_write_tokens → cacheWrite, subtracted from input', async () => {
    const sent = openaiUsage(3000, 1024, 50, 0, 1500)
    const usage = await usageOf('openai', { sse: openaiStream(MODEL, TURN, sent) })
    expect(usage).toEqual({
      inputTokens: 476,
      cacheReadTokens: 1024,
      cacheWriteTokens: 1500,
      outputTokens: 50,
      reasoningTokens: 0,
      raw: sent,
    })
  })

  it('OpenAI: cached_tokens 0 is a reported 0, not an absent field', () => {
    const usage = mapUsage(
      { prompt_tokens: 500, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } },
      undefined,
      'openai',
    )
    expect(usage).toMatchObject({ inputTokens: 500, cacheReadTokens: 0, outputTokens: 5 })
    expect(keys(usage)).toEqual(['cacheReadTokens', 'inputTokens', 'outputTokens', 'raw'])
  })

  it('llama.cpp: timings win (cache_n → cacheRead, prompt_n → input); raw is the usage plus timings', async () => {
    const usage = await usageOf('llamacpp', { sse: llamacppStream(MODEL, TURN, 1150, 50, 12) })
    expect(usage).toMatchObject({ inputTokens: 50, cacheReadTokens: 1150, outputTokens: 12 })
    expect(keys(usage)).toEqual(['cacheReadTokens', 'inputTokens', 'outputTokens', 'raw'])
    expect(usage?.raw).toEqual({
      completion_tokens: 12,
      prompt_tokens: 1200,
      total_tokens: 1212,
      prompt_tokens_details: { cached_tokens: 1150 },
      timings: llamacppTimings(1150, 50, 12),
    })
  })

  it("llama.cpp: timings are preferred over a disagreeing cached_tokens mirror, and a fork's cache_write_tokens is not a write", () => {
    const usage = mapUsage(
      { prompt_tokens: 1200, prompt_tokens_details: { cached_tokens: 1100, cache_write_tokens: 100 } },
      { cache_n: 1150, prompt_n: 50 },
      'llamacpp',
    )
    expect(usage).toMatchObject({ inputTokens: 50, cacheReadTokens: 1150 })
    expect(usage.cacheWriteTokens).toBeUndefined()
    const withoutTimings = mapUsage(
      { prompt_tokens: 1200, prompt_tokens_details: { cached_tokens: 1100, cache_write_tokens: 100 } },
      undefined,
      'llamacpp',
    )
    expect(withoutTimings).toMatchObject({ inputTokens: 100, cacheReadTokens: 1100 })
    expect(withoutTimings.cacheWriteTokens).toBeUndefined()
  })

  it('llama.cpp: timings on the finish chunk alone are enough', async () => {
    const sse = [chunk(MODEL, { content: 'hi' }), chunk(MODEL, {}, 'stop', { timings: llamacppTimings(0, 812, 3) })]
    const usage = await usageOf('llamacpp', { sse })
    expect(usage).toMatchObject({ inputTokens: 812, cacheReadTokens: 0 })
    expect(keys(usage)).toEqual(['cacheReadTokens', 'inputTokens', 'raw'])
  })

  it('vLLM without cached tokens: cacheReadTokens stays undefined (unknown, never 0), every prompt token is input', async () => {
    const usage = await usageOf('vllm', { sse: vllmStream(MODEL, TURN, 900, 50) })
    expect(usage).toEqual({
      inputTokens: 900,
      outputTokens: 50,
      raw: { prompt_tokens: 900, total_tokens: 950, completion_tokens: 50, prompt_tokens_details: null },
    })
    expect(keys(usage)).toEqual(['inputTokens', 'outputTokens', 'raw'])
  })

  it('vLLM with --enable-prompt-tokens-details: cached_tokens is read', async () => {
    const sse = [
      chunk(MODEL, { content: 'hi' }),
      chunk(MODEL, {}, 'stop'),
      usageChunk(MODEL, {
        prompt_tokens: 900,
        completion_tokens: 2,
        total_tokens: 902,
        prompt_tokens_details: { cached_tokens: 880 },
      }),
    ]
    expect(await usageOf('vllm', { sse })).toMatchObject({ inputTokens: 20, cacheReadTokens: 880, outputTokens: 2 })
  })

  it('no usage at all: no usage chunk, and the result has no usage', async () => {
    const sse = [chunk(MODEL, { content: 'hi' }), chunk(MODEL, {}, 'stop')]
    expect(await usageOf('generic', { sse })).toBeUndefined()
  })

  it('malformed or missing counts stay undefined', () => {
    const usage = mapUsage(
      { prompt_tokens: -1, completion_tokens: Number.NaN, completion_tokens_details: null } as never,
      undefined,
      'generic',
    )
    expect(keys(usage)).toEqual(['raw'])
  })

  it('the last usage chunk wins when a server streams several', async () => {
    const sse = [
      chunk(MODEL, { content: 'hi' }, null, { usage: { prompt_tokens: 10, completion_tokens: 1 } }),
      chunk(MODEL, {}, 'stop'),
      usageChunk(MODEL, { prompt_tokens: 10, completion_tokens: 2 }),
    ]
    expect(await usageOf('generic', { sse })).toMatchObject({ inputTokens: 10, outputTokens: 2 })
  })
})
