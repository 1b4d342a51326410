import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { PrefixCacheService } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(PrefixCacheService, { profile: 'anthropic' })
  // @ts-expect-error a typo
  ctx.plugin(PrefixCacheService, { profil: 'anthropic' })
  // @ts-expect-error a mistyped value
  ctx.plugin(PrefixCacheService, { profile: 16 })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => PrefixCacheService.Config({ profil: 'anthropic' })).toThrow(
      'PrefixCacheService config: unknown key "profil" (did you mean "profile"?)',
    )
  })
})
