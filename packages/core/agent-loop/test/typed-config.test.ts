import type { Context } from '@cordisjs/core'
import { describe, expect, it } from 'vitest'
import { AgentLoop, ToolRegistry } from '../src/index.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(AgentLoop)
  ctx.plugin(ToolRegistry, {})
  // @ts-expect-error the loop has no settings
  ctx.plugin(AgentLoop, { maxSteps: 10 })
  // @ts-expect-error the registry has no settings
  ctx.plugin(ToolRegistry, { tools: [] })
}

describe('config typos', () => {
  it('are refused at load too, naming the key and the nearest known key', () => {
    expect(() => AgentLoop.Config({ maxSteps: 10 })).toThrow(
      'AgentLoop config: unknown key "maxSteps"; known keys: (none)',
    )
  })
})
