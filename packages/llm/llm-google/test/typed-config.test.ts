import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { GoogleAdapter } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(GoogleAdapter, { apiKeyEnv: 'MY_KEY', models: { 'gemini-3-pro': { contextWindow: 1_000_000 } } })
  // @ts-expect-error a typo next to a valid key
  ctx.plugin(GoogleAdapter, { apiKeyEnv: 'MY_KEY', modles: {} })
  // @ts-expect-error a mistyped value
  ctx.plugin(GoogleAdapter, { timeoutMs: '10s' })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => GoogleAdapter.Config({ apiKey: 'test-key', modles: {} })).toThrow(
      'unknown key "modles" (did you mean "models"?)',
    )
  })
})
