import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { SessionStore } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(SessionStore, { store: 'file', directory: '/tmp/sessions' })
  // @ts-expect-error a typo next to a valid key
  ctx.plugin(SessionStore, { store: 'file', directroy: '/tmp/sessions' })
  // @ts-expect-error a value outside the union
  ctx.plugin(SessionStore, { store: 'sqlite' })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => SessionStore.Config({ store: 'file', directroy: '/tmp/sessions' })).toThrow(
      'SessionStore config: unknown key "directroy" (did you mean "directory"?)',
    )
  })
})
