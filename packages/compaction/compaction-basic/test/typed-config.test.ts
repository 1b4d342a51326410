import type { Context } from '@cordisjs/core'
import { PluginLoadError } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { BasicCompactionEngine } from '../src/index.ts'
import { mountEngine, ROUTE } from './engine-fixture.ts'

// Type-level checks, run by `pnpm typecheck`: each `@ts-expect-error` fails the typecheck when its line compiles.
export function typedConfigs(ctx: Context): void {
  ctx.plugin(BasicCompactionEngine, {
    thresholdRatio: 0.5,
    idle: { minPressure: 0.5 },
    modelPolicies: [{ provider: 'p', model: 'm', maxTokens: 4000 }],
  })
  // @ts-expect-error the typo a new host made
  ctx.plugin(BasicCompactionEngine, { thresholdRation: 0.5 })
  // @ts-expect-error a typo next to a valid key (cordis's own overloads accepted this)
  ctx.plugin(BasicCompactionEngine, { thresholdRation: 0.5, auto: true })
  // @ts-expect-error a typo inside a nested policy
  ctx.plugin(BasicCompactionEngine, { modelPolicies: [{ provider: 'p', model: 'm', maxToken: 4000 }] })
  // @ts-expect-error a mistyped value
  ctx.plugin(BasicCompactionEngine, { thresholdRatio: '0.5' })
}

describe('an engine whose config failed to load', () => {
  it('is named, with the nearest key, by the agent loop, which refuses to create an agent on a broken stack', async () => {
    const harness = await mountEngine({ engine: { thresholdRation: 0.5 } as never })
    try {
      const failure = await harness.ctx.agentLoop.create('broken', { ...ROUTE }).then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(PluginLoadError.isInstance(failure)).toBe(true)
      expect((failure as Error).message).toBe(
        '1 plugin failed to load: @warmfold/compaction-basic (BasicCompactionEngine) failed to load: BasicCompactionEngine config: unknown key "thresholdRation" (did you mean "thresholdRatio"?); ' +
          `known keys: ${Object.keys(BasicCompactionEngine.Config.schema.dict ?? {}).join(', ')}`,
      )
      // The host disposes the failed plugin (or fixes the config): then it may run without compaction, knowingly.
      harness.engineScope.dispose()
      await expect(harness.ctx.agentLoop.create('knowingly', { ...ROUTE })).resolves.toBeDefined()
    } finally {
      await harness.dispose()
    }
  })
})
