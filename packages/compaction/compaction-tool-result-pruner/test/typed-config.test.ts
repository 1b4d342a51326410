import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { ToolResultPruner } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(ToolResultPruner, { thresholdChars: 5000 })
  // @ts-expect-error a typo next to a valid key
  ctx.plugin(ToolResultPruner, { thresholdChars: 5000, headchars: 100 })
  // @ts-expect-error a mistyped value
  ctx.plugin(ToolResultPruner, { thresholdChars: '5000' })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => ToolResultPruner.Config({ thresholdChars: 5000, headchars: 100 })).toThrow(
      'unknown key "headchars" (did you mean "headChars"?)',
    )
  })
})
