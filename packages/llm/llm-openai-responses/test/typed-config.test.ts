import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { OpenAIResponsesAdapter } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(OpenAIResponsesAdapter, {
    apiKeyEnv: 'MY_KEY',
    models: { 'gpt-5': { contextWindow: 400_000, cacheRetention: '24h' } },
  })
  // @ts-expect-error a typo
  ctx.plugin(OpenAIResponsesAdapter, { apiKeyEnv: 'MY_KEY', baseUrl: 'http://127.0.0.1:1' })
  // @ts-expect-error a retention OpenAI does not have
  ctx.plugin(OpenAIResponsesAdapter, { models: { 'gpt-5': { contextWindow: 400_000, cacheRetention: '1w' } } })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => OpenAIResponsesAdapter.Config({ apiKey: 'sk-test', baseUrl: 'http://127.0.0.1:1' })).toThrow(
      'unknown key "baseUrl" (did you mean "baseURL"?)',
    )
  })
})
