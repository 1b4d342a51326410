import type { Context } from '@cordisjs/core'
import { createTestContext } from '@warmfold/test-utils'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import type { ConfigParser, Parsed, WarmfoldPluginInfo } from '../src/index.ts'
import {
  assertPluginsLoaded,
  LlmError,
  LlmRuntime,
  PluginLoadError,
  pluginFailures,
  strictConfig,
  unknownKeyMessage,
  WARMFOLD_PLUGIN,
} from '../src/index.ts'
import { LLM_ADAPTER_ROLE } from '../src/plugin-failures.ts'
import { ScriptedAdapter } from '../src/testing/index.ts'

/** An adapter plugin shaped like the real ones: a strict config, a key read from the environment at load. */
class ExampleAdapter {
  static readonly [WARMFOLD_PLUGIN]: WarmfoldPluginInfo = {
    packageName: '@example/llm-example',
    provides: LLM_ADAPTER_ROLE,
    defaultProvider: 'example',
  }
  static inject = ['llm']
  constructor(ctx: Context, config: Parsed<ExampleAdapter.Config>) {
    if (!process.env[config.apiKeyEnv])
      throw new Error(`ExampleAdapter: the environment variable ${config.apiKeyEnv} (apiKeyEnv) is not set`)
    ctx.llm.registerAdapter(config.provider, new ScriptedAdapter({ responses: { content: 'hi' } }))
  }
}
namespace ExampleAdapter {
  export interface Config {
    provider: string
    baseURL?: string
    apiKeyEnv: string
  }
  export const Config: ConfigParser<Config> = strictConfig(
    'ExampleAdapter',
    Schema.object({
      provider: Schema.string().default('example'),
      baseURL: Schema.string(),
      apiKeyEnv: Schema.string().default('EXAMPLE_API_KEY_FOR_TESTS'),
    }),
  ) as ConfigParser<Config>
}

async function streamError(ctx: Context, provider: string): Promise<unknown> {
  try {
    await ctx.llm.generate({ provider, model: 'scripted-model', messages: [] })
  } catch (error) {
    return error
  }
  return undefined
}

describe('plugins that failed to load are named where their absence shows', () => {
  it('a refused adapter config: the unknown-provider error names the package, the plugin, the key and the nearest valid key', async () => {
    const test = await createTestContext()
    try {
      test.ctx.plugin(LlmRuntime)
      test.ctx.plugin(ExampleAdapter, { baseUrl: 'http://127.0.0.1:1' } as never)
      const error = await streamError(test.ctx, 'example')
      expect(LlmError.isInstance(error) && error.code).toBe('UNKNOWN_PROVIDER')
      expect((error as Error).message).toBe(
        'no LLM adapter is registered for provider "example": @example/llm-example (ExampleAdapter) failed to load: ExampleAdapter config: unknown key "baseUrl" (did you mean "baseURL"?); known keys: provider, baseURL, apiKeyEnv; registered providers: (none)',
      )
      expect(pluginFailures(test.ctx).map((failure) => failure.plugin)).toEqual(['ExampleAdapter'])
    } finally {
      await test.dispose()
    }
  })

  it('a constructor that throws (a missing key variable) is listed once its load task has run; assertPluginsLoaded waits for it', async () => {
    const test = await createTestContext()
    try {
      test.ctx.plugin(LlmRuntime)
      test.ctx.plugin(ExampleAdapter, { apiKeyEnv: 'WARMFOLD_TEST_UNSET_VARIABLE' })
      const failure = await assertPluginsLoaded(test.ctx).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(PluginLoadError.isInstance(failure)).toBe(true)
      const { failures, message, code } = failure as PluginLoadError
      expect(code).toBe('PLUGIN_LOAD_FAILED')
      expect(message).toBe(
        '1 plugin failed to load: @example/llm-example (ExampleAdapter) failed to load: ExampleAdapter: the environment variable WARMFOLD_TEST_UNSET_VARIABLE (apiKeyEnv) is not set',
      )
      expect(failures[0]?.warmfold?.packageName).toBe('@example/llm-example')
      expect((await streamError(test.ctx, 'example')) as Error).toHaveProperty(
        'message',
        expect.stringContaining('WARMFOLD_TEST_UNSET_VARIABLE'),
      )
    } finally {
      await test.dispose()
    }
  })

  it('a warmfold plugin waiting for a service nobody provides is a failure too; disposing a failed plugin clears it', async () => {
    const test = await createTestContext()
    try {
      // No LlmRuntime: cordis keeps the adapter pending on its required ctx.llm.
      test.ctx.plugin(ExampleAdapter)
      expect(pluginFailures(test.ctx).map((failure) => failure.message)).toEqual([
        '@example/llm-example (ExampleAdapter) failed to load: it requires ctx.llm, which no plugin in its Context provides, so cordis keeps it waiting (mount the plugin that provides ctx.llm)',
      ])
      process.env.EXAMPLE_API_KEY_FOR_TESTS = 'set'
      test.ctx.plugin(LlmRuntime)
      await assertPluginsLoaded(test.ctx)
      const broken = test.ctx.plugin(ExampleAdapter, { apiKeyEnv: 3 } as never)
      expect(pluginFailures(test.ctx)).toHaveLength(1)
      broken.dispose()
      expect(pluginFailures(test.ctx)).toEqual([])
      await assertPluginsLoaded(test.ctx)
    } finally {
      delete process.env.EXAMPLE_API_KEY_FOR_TESTS
      await test.dispose()
    }
  })

  it('other plugins are reported after warmfold ones, by their name', async () => {
    const test = await createTestContext()
    try {
      test.ctx.plugin(LlmRuntime, { bogus: true } as never)
      const hostPlugin = {
        name: 'host-plugin',
        apply: () => {},
        Config: (config?: { strict?: boolean }): { ok: true } => {
          void config
          throw new Error('host config refused')
        },
      }
      test.ctx.plugin(hostPlugin)
      expect(pluginFailures(test.ctx).map((failure) => [failure.plugin, failure.warmfold?.packageName])).toEqual([
        ['LlmRuntime', '@warmfold/llm'],
        ['host-plugin', undefined],
      ])
    } finally {
      await test.dispose()
    }
  })
})

describe('unknownKeyMessage', () => {
  it('suggests the key that differs in case or by a small edit, and nothing for an unrelated key', () => {
    const known = ['thresholdRatio', 'retainRatio', 'baseURL', 'auto']
    expect(unknownKeyMessage('thresholdRation', known)).toContain('(did you mean "thresholdRatio"?)')
    expect(unknownKeyMessage('baseurl', known)).toContain('(did you mean "baseURL"?)')
    expect(unknownKeyMessage('autp', known)).toContain('(did you mean "auto"?)')
    expect(unknownKeyMessage('temperature', known)).toBe(
      'unknown key "temperature"; known keys: thresholdRatio, retainRatio, baseURL, auto',
    )
  })
})

/** Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck if the line compiles. */
export function typedConfigs(ctx: Context): void {
  ctx.plugin(ExampleAdapter, { provider: 'mine', baseURL: 'http://127.0.0.1:1' })
  ctx.plugin(ExampleAdapter)
  ctx.plugin(LlmRuntime)
  // @ts-expect-error a typo alone
  ctx.plugin(ExampleAdapter, { baseUrl: 'http://127.0.0.1:1' })
  // @ts-expect-error a typo next to a valid key (cordis's own overloads accept this)
  ctx.plugin(ExampleAdapter, { provider: 'mine', baseUrl: 'http://127.0.0.1:1' })
  // @ts-expect-error a mistyped value
  ctx.plugin(ExampleAdapter, { baseURL: 42 })
  // @ts-expect-error the runtime has no settings
  ctx.plugin(LlmRuntime, { retries: 3 })
}
