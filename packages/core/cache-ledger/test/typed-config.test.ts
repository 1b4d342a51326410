import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { CacheLedger } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(CacheLedger, { guard: 'refuse', cacheTtlMs: { anthropic: 300_000 } })
  // @ts-expect-error a typo next to a valid key
  ctx.plugin(CacheLedger, { guard: 'refuse', cacheTtl: { anthropic: 300_000 } })
  // @ts-expect-error a value outside the union
  ctx.plugin(CacheLedger, { guard: 'block' })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => CacheLedger.Config({ guard: 'refuse', gaurd: 'warn' })).toThrow(
      'CacheLedger config: unknown key "gaurd" (did you mean "guard"?)',
    )
  })
})
