import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { OpenAICompatibleAdapter } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'deepseek',
    baseURL: 'http://127.0.0.1:1',
    models: { m: { contextWindow: 128_000 } },
  })
  // @ts-expect-error provider, baseURL and models are required
  ctx.plugin(OpenAICompatibleAdapter)
  // @ts-expect-error a typo next to valid keys
  ctx.plugin(OpenAICompatibleAdapter, { provider: 'deepseek', baseURL: 'http://127.0.0.1:1', models: {}, maxRetry: 2 })
  // @ts-expect-error a dialect that does not exist
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'deepseek',
    baseURL: 'http://127.0.0.1:1',
    models: {},
    dialect: 'gpt',
  })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() =>
      OpenAICompatibleAdapter.Config({
        provider: 'deepseek',
        baseURL: 'http://127.0.0.1:1',
        models: { m: { contextWindow: 1000, defaultEfort: 'high' } },
      }),
    ).toThrow('unknown key "defaultEfort" (did you mean "defaultEffort"?)')
  })
})
