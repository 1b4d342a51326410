import type { StreamChunk } from '@warmfold/llm'
import { createAssistantMessage, createUserMessage, LlmError, LlmRuntime, textBlock } from '@warmfold/llm'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import AnthropicAdapterDefault, { AnthropicAdapter, parseAnthropicConfig } from '../src/index.ts'
import { resolveApiKey } from '../src/config.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { breakpointCount, MODEL, MODELS, mountAdapter } from './adapter-fixture.ts'
import { PromptCacheSimulator } from './prompt-cache-simulator.ts'
import { streamReply } from './sse-script.ts'

const contexts: Array<TestContext | AdapterHarness> = []
const usageOf = (chunks: StreamChunk[]) => chunks.find((chunk) => chunk.type === 'usage')?.usage
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

async function load(config: Record<string, unknown>): Promise<TestContext> {
  const context = await createTestContext()
  contexts.push(context)
  context.ctx.plugin(LlmRuntime)
  context.ctx.plugin(AnthropicAdapter, config)
  await new Promise((resolve) => setImmediate(resolve))
  return context
}

const errorText = (context: TestContext) =>
  context.errors.map((error) => (error instanceof Error ? error.message : String(error))).join('\n')

describe('config', () => {
  it('applies the documented defaults', () => {
    expect(parseAnthropicConfig({})).toEqual({
      provider: 'anthropic',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
      models: {},
      thinkingBudgets: { low: 2048, high: 8192, max: 24576 },
      cacheTtl: '5m',
      timeoutMs: 600_000,
      maxRetries: 2,
      retryBaseMs: 500,
    })
    expect(parseAnthropicConfig({ apiKey: 'k' })).not.toHaveProperty('apiKeyEnv')
    expect(AnthropicAdapterDefault).toBe(AnthropicAdapter)
  })

  it.each([
    [{ retries: 3 }, /unknown key "retries"; known keys: provider, baseURL, apiKey, apiKeyEnv, models/],
    [{ apiKey: 'k', apiKeyEnv: 'MY_KEY' }, /apiKey and apiKeyEnv are exclusive/],
    [
      { models: { m: { contextWindow: 1000, defaultMaxTokens: 100, window: 5 } } },
      /models\["m"\]: unknown key "window"/,
    ],
    [{ models: { m: { contextWindow: 1000 } } }, /defaultMaxTokens/],
    [
      { models: { m: { contextWindow: 1000, defaultMaxTokens: 100, efforts: ['medium'] } } },
      /models\["m"\]\.efforts: "medium" has no entry in thinkingBudgets/,
    ],
    [
      { models: { m: { contextWindow: 1000, defaultMaxTokens: 100, efforts: ['off'], defaultEffort: 'high' } } },
      /defaultEffort "high" must be one of/,
    ],
    [{ thinkingBudgets: { off: 4096 } }, /thinkingBudgets\.off is reserved/],
    [{ cacheTtl: '24h' }, /cacheTtl/],
    [{ baseURL: 'localhost:8080' }, /baseURL must be an absolute http\(s\) URL/],
    [{ apiKey: ' \r\n ' }, /AnthropicAdapter config: apiKey is empty after trimming whitespace/],
    [{ apiKey: 'sk-ant key' }, /AnthropicAdapter config: apiKey has whitespace or a control character inside the key/],
    [{ deadlineMs: 0 }, /deadlineMs/],
  ])('rejects %j at load, naming the key', async (config, message) => {
    expect(() => parseAnthropicConfig(config)).toThrow(message)
    const context = await load(config)
    expect(errorText(context)).toMatch(message)
    expect(context.ctx.llm.providers()).toEqual([])
  })

  it('fails to load when the key variable is unset, naming the variable and nothing else', async () => {
    const name = 'WARMFOLD_TEST_UNSET_ANTHROPIC_KEY'
    delete process.env[name]
    const context = await load({ apiKeyEnv: name })
    expect(errorText(context)).toMatch(new RegExp(`environment variable ${name} \\(apiKeyEnv\\) is not set`))
    expect(context.ctx.llm.providers()).toEqual([])
    // The default variable is ANTHROPIC_API_KEY (checked without touching the real environment).
    expect(() => resolveApiKey(parseAnthropicConfig({}), {})).toThrow(
      /environment variable ANTHROPIC_API_KEY \(apiKeyEnv\) is not set/,
    )
    expect(() => resolveApiKey({ apiKeyEnv: 'K' }, { K: ' \r\n ' })).toThrow(
      /environment variable K \(apiKeyEnv\) is empty after trimming whitespace/,
    )
    expect(resolveApiKey({ apiKeyEnv: 'K' }, { K: 'value' })).toBe('value')
    // A CRLF env file or a mounted secret leaves a trailing newline: trimmed at load, as fetch trims the header.
    expect(resolveApiKey({ apiKeyEnv: 'K' }, { K: 'value\r\n  ' })).toBe('value')
    expect(parseAnthropicConfig({ apiKey: '  value\n' }).apiKey).toBe('value')
  })

  it("gives each model the cache lifetime of the adapter's breakpoints, or the model's own", async () => {
    const hour = await mountAdapter(() => streamReply({ blocks: [{ type: 'text', text: 'ok' }] }), {
      cacheTtl: '1h',
      models: {
        a: { contextWindow: 1000, defaultMaxTokens: 10 },
        b: { contextWindow: 1000, defaultMaxTokens: 10, cacheTtlMs: 90_000 },
      },
    })
    contexts.push(hour)
    expect((await hour.ctx.llm.resolveModelInfo('anthropic', 'a')).cacheTtlMs).toBe(3_600_000)
    expect((await hour.ctx.llm.resolveModelInfo('anthropic', 'b')).cacheTtlMs).toBe(90_000)
    expect(() =>
      parseAnthropicConfig({ models: { a: { contextWindow: 1000, defaultMaxTokens: 10, cacheTtlMs: 0 } } }),
    ).toThrow(/cacheTtlMs/)
  })

  it('gives a model its own cacheTtl: the ttl of all its breakpoints, its cacheTtlMs, and 1-hour writes in usage.raw', async () => {
    const cache = new PromptCacheSimulator()
    const models = {
      short: { contextWindow: 1000, defaultMaxTokens: 10 },
      long: { contextWindow: 1000, defaultMaxTokens: 10, cacheTtl: '1h' },
      pinned: { contextWindow: 1000, defaultMaxTokens: 10, cacheTtl: '1h', cacheTtlMs: 90_000 },
    }
    const adapter = await mountAdapter(
      (request) =>
        streamReply({
          blocks: [{ type: 'text', text: 'ok' }],
          startUsage: { ...cache.usageFor(request.body), output_tokens: 1 },
        }),
      { cacheTtl: '5m', models },
    )
    contexts.push(adapter)
    expect((await adapter.ctx.llm.resolveModelInfo('anthropic', 'short')).cacheTtlMs).toBe(300_000)
    expect((await adapter.ctx.llm.resolveModelInfo('anthropic', 'long')).cacheTtlMs).toBe(3_600_000)
    expect((await adapter.ctx.llm.resolveModelInfo('anthropic', 'pinned')).cacheTtlMs).toBe(90_000)
    const messages = [
      createUserMessage('Hello'),
      createAssistantMessage([textBlock('Hi')], { provider: 'anthropic', model: 'long' }),
      createUserMessage('Again'),
    ]
    const long = usageOf(await adapter.collect({ model: 'long', system: 'sys', messages }))
    const short = usageOf(await adapter.collect({ model: 'short', system: 'other sys', messages }))
    const [longRequest, shortRequest] = adapter.server.requests
    expect(longRequest!.rawBody.split('"cache_control":{"type":"ephemeral","ttl":"1h"}').length - 1).toBe(
      breakpointCount(longRequest!.rawBody),
    )
    expect(breakpointCount(longRequest!.rawBody)).toBe(2)
    expect(shortRequest!.rawBody).not.toContain('"ttl"')
    // The write is priced by its TTL: the split stays in usage.raw.cache_creation.
    expect(long?.raw).toMatchObject({
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: long?.cacheWriteTokens },
    })
    expect(short?.raw).toMatchObject({
      cache_creation: { ephemeral_5m_input_tokens: short?.cacheWriteTokens, ephemeral_1h_input_tokens: 0 },
    })
    expect(long?.cacheWriteTokens).toBeGreaterThan(0)
    expect(() =>
      parseAnthropicConfig({ models: { a: { contextWindow: 1000, defaultMaxTokens: 10, cacheTtl: '24h' } } }),
    ).toThrow(/cacheTtl/)
  })

  it('describes configured models and names the known ones for an unknown model', async () => {
    const adapter = await mountAdapter(() => streamReply({ blocks: [{ type: 'text', text: 'ok' }] }))
    contexts.push(adapter)
    // cacheTtlMs: 5 minutes, the lifetime of the adapter's default cache_control breakpoints, and that TTL's prices.
    const fiveMinutes = { cacheTtlMs: 300_000, cachePrices: { read: 0.1, write: 1.25 } }
    expect(await adapter.ctx.llm.resolveModelInfo('anthropic', MODEL)).toEqual({
      contextWindow: 200_000,
      defaultMaxTokens: 1024,
      ...fiveMinutes,
      reasoning: {
        efforts: ['off', 'low', 'high'],
        defaultEffort: 'off',
        outputReserveTokens: { low: 2048, high: 8192 },
      },
    })
    expect(await adapter.ctx.llm.resolveModelInfo('anthropic', 'claude-other')).toEqual({
      contextWindow: 100_000,
      defaultMaxTokens: 512,
      ...fiveMinutes,
    })
    const error = await adapter.ctx.llm.resolveModelInfo('anthropic', 'claude-9').catch((caught: unknown) => caught)
    expect(LlmError.isInstance(error) && error.code).toBe('UNKNOWN_MODEL')
    expect((error as LlmError).message).toBe(
      'model "claude-9" is not known to provider "anthropic"; known models: claude-other, claude-test',
    )
    // The runtime materializes the model's defaults, which become max_tokens and (no) thinking.
    await adapter.collect({ model: 'claude-other' })
    expect(adapter.server.requests[0]!.body).toMatchObject({ model: 'claude-other', max_tokens: 512 })
    expect(adapter.server.requests[0]!.body).not.toHaveProperty('thinking')
    adapter.assertClean()
  })

  it('registers under the configured provider id and unregisters on unload', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(LlmRuntime)
    const fork = context.ctx.plugin(AnthropicAdapter, { provider: 'claude', apiKey: 'k', models: MODELS })
    await new Promise((resolve) => setImmediate(resolve))
    expect(context.ctx.llm.providers()).toEqual(['claude'])
    fork.dispose()
    expect(context.ctx.llm.providers()).toEqual([])
    const error = await context.ctx.llm
      .generate({ provider: 'claude', model: MODEL, messages: [createUserMessage('hi')] })
      .catch((caught: unknown) => caught)
    expect(LlmError.isInstance(error) && error.code).toBe('UNKNOWN_PROVIDER')
    context.assertClean()
  })
})
