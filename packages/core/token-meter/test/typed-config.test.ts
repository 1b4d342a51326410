import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { TokenMeter } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(TokenMeter)
  ctx.plugin(TokenMeter, { tokenizer: (text) => text.length })
  // @ts-expect-error a typo next to nothing valid
  ctx.plugin(TokenMeter, { tokeniser: (text: string) => text.length })
  // @ts-expect-error a mistyped value
  ctx.plugin(TokenMeter, { tokenizer: 4 })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => TokenMeter.Config({ tokeniser: () => 1 })).toThrow(
      'TokenMeter config: unknown key "tokeniser" (did you mean "tokenizer"?)',
    )
  })
})
