import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { AiSdkAdapter } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(AiSdkAdapter, { provider: 'bedrock', maxRetries: 2 })
  // @ts-expect-error a typo next to a valid key
  ctx.plugin(AiSdkAdapter, { provider: 'bedrock', maxRetry: 2 })
  // @ts-expect-error a mistyped value
  ctx.plugin(AiSdkAdapter, { provider: 'bedrock', timeoutMs: '10s' })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => AiSdkAdapter.Config({ provider: 'bedrock', maxRetires: 2 })).toThrow(
      'unknown key "maxRetires" (did you mean "maxRetries"?)',
    )
  })
})
