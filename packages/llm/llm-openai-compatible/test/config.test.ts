import { inspect } from 'node:util'
import { LlmRuntime } from '@warmfold/llm'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import OpenAICompatibleAdapterDefault, { OpenAICompatibleAdapter, parseOpenAICompatibleConfig } from '../src/index.ts'
import { resolveApiKey } from '../src/config.ts'
import type { AdapterHarness } from './fixture.ts'
import { collect, expectLlmError, finish, KEY_ENV, MODEL, mountAdapter, request, SECRET_KEY } from './fixture.ts'
import { openaiStream, openaiUsage } from './provider-streams.ts'

const MINIMAL = {
  provider: 'deepseek',
  baseURL: 'https://api.deepseek.com',
  models: { 'deepseek-chat': { contextWindow: 128000 } },
}
const UNSET_ENV = 'WARMFOLD_TEST_SURELY_UNSET_KEY'

const contexts: TestContext[] = []
const harnesses: AdapterHarness[] = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const context of contexts.splice(0)) await context.dispose()
  for (const harness of harnesses.splice(0)) await finish(harness)
})

/** Mounts the plugin with `config` and returns the load errors cordis reported (as text). */
async function loadErrors(config: unknown): Promise<{ context: TestContext; messages: string[] }> {
  const context = await createTestContext()
  contexts.push(context)
  context.ctx.plugin(LlmRuntime)
  context.ctx.plugin(OpenAICompatibleAdapter, config as never)
  await new Promise((resolve) => setTimeout(resolve, 0))
  return { context, messages: context.errors.map((error) => inspect(error)) }
}

describe('config', () => {
  it('applies the documented defaults', () => {
    expect(parseOpenAICompatibleConfig(MINIMAL)).toEqual({
      ...MINIMAL,
      dialect: 'generic',
      timeoutMs: 600000,
      maxRetries: 2,
      retryBaseMs: 500,
      maxRetryWaitMs: 60000,
      headers: {},
      promptCacheKey: 'off',
    })
    expect(parseOpenAICompatibleConfig({ ...MINIMAL, dialect: 'openai' }).promptCacheKey).toBe('session')
    expect(parseOpenAICompatibleConfig({ ...MINIMAL, dialect: 'openai', promptCacheKey: 'off' }).promptCacheKey).toBe(
      'off',
    )
    expect(parseOpenAICompatibleConfig({ ...MINIMAL, dialect: 'vllm', promptCacheKey: 'session' }).promptCacheKey).toBe(
      'session',
    )
    expect(OpenAICompatibleAdapterDefault).toBe(OpenAICompatibleAdapter)
  })

  it('an unknown key fails the load, naming the key; nothing is registered', async () => {
    const { context, messages } = await loadErrors({ ...MINIMAL, retries: 3 })
    expect(messages.some((message) => message.includes('OpenAICompatibleAdapter config: unknown key "retries"'))).toBe(
      true,
    )
    expect(context.ctx.llm.providers()).toEqual([])
  })

  it('apiKey together with apiKeyEnv fails the load without printing the key', async () => {
    const { context, messages } = await loadErrors({ ...MINIMAL, apiKey: SECRET_KEY, apiKeyEnv: KEY_ENV })
    expect(messages.some((message) => message.includes('set apiKey or apiKeyEnv, not both'))).toBe(true)
    for (const message of messages) expect(message).not.toContain(SECRET_KEY)
    expect(context.ctx.llm.providers()).toEqual([])
  })

  it('an apiKeyEnv whose variable is unset fails the load, naming the variable', async () => {
    vi.stubEnv(UNSET_ENV, undefined)
    const { context, messages } = await loadErrors({ ...MINIMAL, apiKeyEnv: UNSET_ENV })
    expect(
      messages.some((message) => message.includes(`environment variable ${UNSET_ENV}, which is not set or empty`)),
    ).toBe(true)
    expect(context.ctx.llm.providers()).toEqual([])
  })

  it('trims a key read from a file, a CRLF env file or a k8s secret, at load', () => {
    expect(parseOpenAICompatibleConfig({ ...MINIMAL, apiKey: ` ${SECRET_KEY}\r\n` }).apiKey).toBe(SECRET_KEY)
    expect(resolveApiKey({ provider: 'p', apiKeyEnv: 'PADDED' }, { PADDED: `${SECRET_KEY}\r\n  ` })).toBe(SECRET_KEY)
  })

  it('a blank apiKeyEnv variable fails the load, naming the variable and never a value', async () => {
    expect(() => resolveApiKey({ provider: 'p', apiKeyEnv: 'BLANK' }, { BLANK: ' \r\n' })).toThrow(
      'OpenAICompatibleAdapter (provider "p"): the environment variable BLANK (apiKeyEnv) is empty after trimming whitespace',
    )
    vi.stubEnv(KEY_ENV, 'sk-inner secret\n')
    const { context, messages } = await loadErrors({ ...MINIMAL, apiKeyEnv: KEY_ENV })
    expect(
      messages.some((message) =>
        message.includes(
          `the environment variable ${KEY_ENV} (apiKeyEnv) has whitespace or a control character inside the key`,
        ),
      ),
    ).toBe(true)
    expect(messages.join('\n')).not.toContain('sk-inner')
    expect(context.ctx.llm.providers()).toEqual([])
  })

  it('an apiKeyEnv whose variable is empty is unset too', () => {
    expect(() => resolveApiKey({ provider: 'p', apiKeyEnv: 'EMPTY' }, { EMPTY: '' })).toThrow(
      'environment variable EMPTY, which is not set or empty',
    )
    expect(resolveApiKey({ provider: 'p', apiKeyEnv: 'SET' }, { SET: SECRET_KEY })).toBe(SECRET_KEY)
    expect(resolveApiKey({ provider: 'p', apiKey: SECRET_KEY })).toBe(SECRET_KEY)
    expect(resolveApiKey({ provider: 'p' })).toBeUndefined()
  })

  it('rejects bad values, naming the key and never echoing an apiKey', () => {
    const cases: Array<[unknown, string]> = [
      [{ baseURL: 'http://x', models: MINIMAL.models }, '$.provider missing required value'],
      [{ provider: 'p', models: MINIMAL.models }, '$.baseURL missing required value'],
      [{ provider: 'p', baseURL: 'http://x' }, '$.models missing required value'],
      [{ ...MINIMAL, provider: '' }, 'provider must not be empty'],
      [{ ...MINIMAL, baseURL: 'api.deepseek.com' }, 'baseURL must be an absolute http(s) URL'],
      [{ ...MINIMAL, baseURL: 'ftp://example.com' }, 'baseURL must use http or https'],
      [{ ...MINIMAL, baseURL: 'https://user:pass@example.com' }, 'baseURL must not carry credentials'],
      [{ ...MINIMAL, dialect: 'anthropic' }, '$.dialect expected'],
      [{ ...MINIMAL, models: {} }, 'models must name at least one model'],
      [{ ...MINIMAL, models: { m: {} } }, '$.models.m.contextWindow missing required value'],
      [{ ...MINIMAL, models: { m: { contextWindow: 10, window: 5 } } }, 'models.m: unknown key "window"'],
      [
        { ...MINIMAL, models: { m: { contextWindow: 10, efforts: ['low'], defaultEffort: 'max' } } },
        'models.m.defaultEffort "max" must be one of efforts (low)',
      ],
      [
        { ...MINIMAL, models: { m: { contextWindow: 10, defaultEffort: 'max' } } },
        'must be one of efforts (none configured)',
      ],
      [
        { ...MINIMAL, models: { m: { contextWindow: 10, efforts: ['low', 'low'] } } },
        'models.m.efforts must not repeat an effort',
      ],
      [
        { ...MINIMAL, models: { m: { contextWindow: 10, defaultMaxTokens: 11 } } },
        'models.m.defaultMaxTokens (11) must not exceed contextWindow (10)',
      ],
      [{ ...MINIMAL, timeoutMs: 0 }, '$.timeoutMs'],
      [{ ...MINIMAL, maxRetries: -1 }, '$.maxRetries'],
      [{ ...MINIMAL, headers: { 'bad header': 'x' } }, 'headers: "bad header" is not a valid HTTP header name'],
      [{ ...MINIMAL, apiKeyEnv: 'not a name' }, 'apiKeyEnv must be an environment variable name'],
      [{ ...MINIMAL, apiKey: '' }, 'apiKey must not be empty'],
      [{ ...MINIMAL, apiKey: 987654321 }, 'apiKey must be a string'],
      [{ ...MINIMAL, apiKey: ' \r\n ' }, 'apiKey is empty after trimming whitespace'],
      [{ ...MINIMAL, apiKey: 'sk-987654321 and more' }, 'apiKey has whitespace or a control character inside the key'],
      [{ ...MINIMAL, timeoutMs: 100, deadlineMs: 0 }, '$.deadlineMs'],
    ]
    for (const [config, message] of cases) {
      let thrown: unknown
      try {
        parseOpenAICompatibleConfig(config as never)
      } catch (error) {
        thrown = error
      }
      expect(thrown, message).toBeInstanceOf(TypeError)
      expect((thrown as Error).message, message).toContain(message)
      expect((thrown as Error).message.startsWith('OpenAICompatibleAdapter config')).toBe(true)
      expect((thrown as Error).message).not.toContain('987654321')
    }
  })
})

describe('registration', () => {
  it('registers under `provider` and describes the configured models', async () => {
    const harness = await mountAdapter(() => ({ status: 500, body: 'unused' }), {
      provider: 'local',
      models: {
        small: { contextWindow: 8192, defaultMaxTokens: 512, efforts: ['low', 'high'], defaultEffort: 'low' },
        plain: { contextWindow: 4096 },
      },
    })
    harnesses.push(harness)
    expect(harness.ctx.llm.providers()).toEqual(['local'])
    expect(await harness.ctx.llm.resolveModelInfo('local', 'small')).toEqual({
      contextWindow: 8192,
      defaultMaxTokens: 512,
      reasoning: { efforts: ['low', 'high'], defaultEffort: 'low' },
    })
    expect(await harness.ctx.llm.resolveModelInfo('local', 'plain')).toEqual({ contextWindow: 4096 })
  })

  it.each([
    ['deepseek', 3 * 3_600_000],
    ['openai', 5 * 60_000],
    ['vllm', undefined],
    ['llamacpp', undefined],
    ['generic', undefined],
  ] as const)("a %s model gets the dialect's cache lifetime unless it sets its own", async (dialect, ttl) => {
    const harness = await mountAdapter(() => ({ status: 500, body: 'unused' }), {
      dialect,
      models: { a: { contextWindow: 4096 }, b: { contextWindow: 4096, cacheTtlMs: 86_400_000 } },
    })
    harnesses.push(harness)
    expect((await harness.ctx.llm.resolveModelInfo('test', 'a')).cacheTtlMs).toBe(ttl)
    expect((await harness.ctx.llm.resolveModelInfo('test', 'b')).cacheTtlMs).toBe(86_400_000)
  })

  it('an unknown model is UNKNOWN_MODEL naming it and the known ones, and nothing is sent', async () => {
    const harness = await mountAdapter(() => ({ status: 500, body: 'unused' }), {
      models: { a: { contextWindow: 1 }, b: { contextWindow: 2 } },
    })
    harnesses.push(harness)
    const error = await expectLlmError(() => collect(harness, { ...request(harness), model: 'gpt-9' }), 'UNKNOWN_MODEL')
    expect(error.message).toBe('model "gpt-9" is not configured for provider "test"; known models: a, b')
    expect(error.retryable).toBe(false)
    await expectLlmError(() => harness.ctx.llm.resolveModelInfo('test', 'toString'), 'UNKNOWN_MODEL')
    expect(harness.server.requests).toHaveLength(0)
  })

  it('the registration is undone when the plugin unloads', async () => {
    const harness = await mountAdapter(() => ({ sse: openaiStream(MODEL, { text: 'ok' }, openaiUsage(1, 0, 1, 0)) }))
    harnesses.push(harness)
    await collect(harness, request(harness))
    const fork = harness.ctx.registry.get(OpenAICompatibleAdapter)
    expect(fork).toBeDefined()
    harness.ctx.registry.delete(OpenAICompatibleAdapter)
    expect(harness.ctx.llm.providers()).toEqual([])
    await expectLlmError(() => collect(harness, request(harness)), 'UNKNOWN_PROVIDER')
    expect(harness.server.requests).toHaveLength(1)
  })

  it('several endpoints mount side by side and unload one by one; the same provider id twice fails the second load', async () => {
    const harness = await mountAdapter(() => ({ sse: openaiStream(MODEL, { text: 'ok' }, openaiUsage(1, 0, 1, 0)) }), {
      provider: 'first',
    })
    harnesses.push(harness)
    const second = harness.ctx.plugin(OpenAICompatibleAdapter, {
      provider: 'second',
      baseURL: harness.server.baseURL,
      models: { [MODEL]: { contextWindow: 10 } },
    })
    expect(harness.ctx.llm.providers()).toEqual(['first', 'second'])
    await collect(harness, { ...request(harness), provider: 'second' })
    expect(harness.server.requests).toHaveLength(1)
    second.dispose()
    expect(harness.ctx.llm.providers()).toEqual(['first'])
    harness.ctx.plugin(OpenAICompatibleAdapter, {
      provider: 'first',
      baseURL: harness.server.baseURL,
      models: { [MODEL]: { contextWindow: 10 } },
    })
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(
      harness.errors
        .map((error) => inspect(error))
        .some((message) => message.includes('provider "first" is already registered')),
    ).toBe(true)
    harness.errors.splice(0)
    expect(harness.ctx.llm.providers()).toEqual(['first'])
  })
})
