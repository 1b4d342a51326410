import { LlmRuntime } from '@warmfold/llm'
import type { RecordingServer } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { AiSdkAdapter, AiSdkLlmAdapter, parseAiSdkConfig } from '../src/index.ts'
import { cacheKindOf } from '../src/config.ts'
import { promptCacheKey } from '../src/build-call-options.ts'
import { modelFor } from './fixture.ts'

// Nothing here sends a request: the models only need an address.
const server = { baseURL: 'http://127.0.0.1:9/v1' } as RecordingServer

const entry = (extra: Record<string, unknown> = {}) => ({
  model: modelFor('compat', server),
  contextWindow: 1000,
  ...extra,
})

describe('parseAiSdkConfig', () => {
  it('fills the defaults and keeps the model instance itself', () => {
    const model = modelFor('anthropic', server)
    const config = parseAiSdkConfig({ models: { m: { model, contextWindow: 1000 } } })
    expect(config).toMatchObject({
      provider: 'ai-sdk',
      redact: [],
      timeoutMs: 600_000,
      maxRetries: 2,
      retryBaseMs: 500,
    })
    expect(config.models.m!.model).toBe(model)
    expect(cacheKindOf(config.models.m!)).toBe('anthropic')
    expect(cacheKindOf(parseAiSdkConfig({ models: { m: entry() } }).models.m!)).toBe('none')
  })

  it.each([
    ['config: unknown key "retries"', { retries: 1 }],
    ['models["m"]: unknown key "contextwindow"', { models: { m: entry({ contextwindow: 5 }) } }],
    [
      'models["m"].model must be an AI SDK LanguageModel instance',
      { models: { m: { contextWindow: 5, model: { specificationVersion: 'v3' } } } },
    ],
    [
      'models["m"].contextWindow must be an integer from 1 to 2147483647, got 0',
      { models: { m: entry({ contextWindow: 0 }) } },
    ],
    [
      'models["m"].efforts: "high" has no entry in models["m"].effortOptions',
      { models: { m: entry({ efforts: ['high'] }) } },
    ],
    [
      'models["m"].defaultEffort "max" must be one of models["m"].efforts',
      { models: { m: entry({ efforts: ['off'], defaultEffort: 'max' }) } },
    ],
    ['models["m"].effortOptions.off is reserved', { models: { m: entry({ effortOptions: { off: {} } }) } }],
    [
      'models["m"].effortOptions.high.openai must be an object of options',
      { models: { m: entry({ effortOptions: { high: { openai: 'high' } } }) } },
    ],
    [
      'models["m"].cache must be one of anthropic, openai, openai-compatible, none, got "gemini"',
      { models: { m: entry({ cache: 'gemini' }) } },
    ],
    ['redact must be an array of non-empty strings', { redact: [''] }],
    ['provider must be a non-empty string', { provider: '' }],
  ])('rejects a bad config: %s', (message, input) => {
    expect(() => parseAiSdkConfig(input)).toThrow(message)
  })

  it('refuses a model of another specification version, naming the version', () => {
    const v4 = {
      specificationVersion: 'v4',
      provider: 'future.chat',
      modelId: 'x',
      supportedUrls: {},
      doGenerate: () => undefined,
      doStream: () => undefined,
    }
    expect(() => parseAiSdkConfig({ models: { m: { model: v4, contextWindow: 10 } } })).toThrow(
      'models["m"].model implements provider specification "v4"; this adapter supports only "v3"',
    )
    expect(() =>
      parseAiSdkConfig({ models: { m: { model: { ...v4, specificationVersion: 'v2' }, contextWindow: 10 } } }),
    ).toThrow('provider specification "v2"')
  })
})

describe('resolveModel and the plugin', () => {
  it('describes a model: context window, output default, efforts, and the Anthropic 5-minute TTL', () => {
    const adapter = new AiSdkLlmAdapter(
      parseAiSdkConfig({
        models: {
          a: {
            model: modelFor('anthropic', server),
            contextWindow: 200_000,
            defaultMaxTokens: 4096,
            efforts: ['off', 'high'],
            defaultEffort: 'off',
            effortOptions: { high: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } } },
          },
          c: entry({ cacheTtlMs: 60_000 }),
          n: entry(),
        },
      }),
    )
    expect(adapter.resolveModel('ai-sdk', 'a')).toEqual({
      contextWindow: 200_000,
      defaultMaxTokens: 4096,
      cacheTtlMs: 300_000,
      reasoning: { efforts: ['off', 'high'], defaultEffort: 'off', outputReserveTokens: { high: 2048 } },
    })
    expect(adapter.resolveModel('ai-sdk', 'c')).toEqual({ contextWindow: 1000, cacheTtlMs: 60_000 })
    expect(adapter.resolveModel('ai-sdk', 'n')).toEqual({ contextWindow: 1000 })
    expect(() => adapter.resolveModel('ai-sdk', 'zz')).toThrow(
      'model "zz" is not known to provider "ai-sdk"; known models: a, c, n',
    )
  })

  it('derives a stable prompt cache key from the session id, without the id itself', () => {
    const key = promptCacheKey('user@example.com/session-42', {})
    expect(key).toMatch(/^warmfold-[0-9a-f]{32}$/)
    expect(key).toBe(promptCacheKey('user@example.com/session-42', {}))
    expect(key).not.toContain('example')
    expect(promptCacheKey('other', {})).not.toBe(key)
    expect(promptCacheKey('x', { promptCacheKey: false })).toBeUndefined()
    expect(promptCacheKey(undefined, {})).toBeUndefined()
  })

  it('registers under its provider id and unregisters on unload; a bad config fails the load naming the key', async () => {
    const context = await createTestContext()
    context.ctx.plugin(LlmRuntime)
    const fork = context.ctx.plugin(AiSdkAdapter, { provider: 'ai', models: { main: entry() } })
    expect(await context.ctx.llm.resolveModelInfo('ai', 'main')).toEqual({ contextWindow: 1000 })
    expect(context.ctx.llm.providers()).toContain('ai')
    fork.dispose()
    expect(context.ctx.llm.providers()).not.toContain('ai')
    context.ctx.plugin(AiSdkAdapter, { models: { main: entry({ colour: 1 }) } })
    expect(String(context.errors[0])).toContain('unknown key "colour"')
    await context.dispose()
  })
})
