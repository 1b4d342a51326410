import type { Context } from '@cordisjs/core'
import { LlmError, LlmRuntime } from '@warmfold/llm'
import { createTestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(AnthropicAdapter, {
    baseURL: 'http://127.0.0.1:1',
    apiKeyEnv: 'MY_KEY',
    models: { claude: { contextWindow: 200_000, defaultMaxTokens: 8192 } },
  })
  ctx.plugin(AnthropicAdapter)
  // @ts-expect-error the typo a new host made
  ctx.plugin(AnthropicAdapter, { baseUrl: 'http://127.0.0.1:1' })
  // @ts-expect-error a typo next to a valid key
  ctx.plugin(AnthropicAdapter, { apiKeyEnv: 'MY_KEY', baseUrl: 'http://127.0.0.1:1' })
  // @ts-expect-error a mistyped value
  ctx.plugin(AnthropicAdapter, { baseURL: 42 })
  // @ts-expect-error a TTL Anthropic does not have
  ctx.plugin(AnthropicAdapter, { cacheTtl: '24h' })
}

describe('an AnthropicAdapter whose config failed to load', () => {
  it('is named by the turn that needed it: the package, the key and the key it should have been', async () => {
    const test = await createTestContext()
    try {
      test.ctx.plugin(LlmRuntime)
      test.ctx.plugin(AnthropicAdapter, { baseUrl: 'http://127.0.0.1:1', apiKey: 'sk-ant-test' } as never)
      const error = await test.ctx.llm.generate({ provider: 'anthropic', model: 'claude', messages: [] }).then(
        () => undefined,
        (caught: unknown) => caught,
      )
      expect(LlmError.isInstance(error) && error.code).toBe('UNKNOWN_PROVIDER')
      expect((error as Error).message).toMatch(
        /^no LLM adapter is registered for provider "anthropic": @warmfold\/llm-anthropic \(AnthropicAdapter\) failed to load: AnthropicAdapter config: unknown key "baseUrl" \(did you mean "baseURL"\?\); known keys: .+; registered providers: \(none\)$/,
      )
    } finally {
      await test.dispose()
    }
  })

  it('an unset key variable is named the same way, once the load task has run', async () => {
    const test = await createTestContext()
    try {
      test.ctx.plugin(LlmRuntime)
      test.ctx.plugin(AnthropicAdapter, { apiKeyEnv: 'WARMFOLD_TEST_UNSET_ANTHROPIC_KEY' })
      await test.ctx.lifecycle.flush()
      const error = await test.ctx.llm
        .generate({ provider: 'anthropic', model: 'claude', messages: [] })
        .catch((caught: unknown) => caught)
      expect((error as Error).message).toContain(
        '@warmfold/llm-anthropic (AnthropicAdapter) failed to load: AnthropicAdapter: the environment variable WARMFOLD_TEST_UNSET_ANTHROPIC_KEY (apiKeyEnv) is not set',
      )
    } finally {
      await test.dispose()
    }
  })
})
