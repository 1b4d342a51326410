import { createTestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { LlmRuntime } from '../src/index.ts'
import { finish } from './fixture.ts'

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

describe('LlmRuntime config', () => {
  it('loads with no config', async () => {
    const test = await createTestContext()
    test.ctx.plugin(LlmRuntime)
    expect(test.ctx.llm.providers()).toEqual([])
    await finish(test)
  })

  it('fails to load with an unknown key, reporting it through internal/error', async () => {
    const test = await createTestContext()
    try {
      test.ctx.plugin(LlmRuntime, { bogus: 1 } as never)
      expect(test.errors.map(messageOf).some((message) => message.includes('"bogus"'))).toBe(true)
    } finally {
      await test.dispose()
    }
  })

  it('the parser accepts nothing but an empty object, naming the offending key', () => {
    expect(LlmRuntime.Config(undefined)).toEqual({})
    expect(LlmRuntime.Config({})).toEqual({})
    expect(() => LlmRuntime.Config({ retries: 3 })).toThrow(
      'LlmRuntime config: unknown key "retries"; known keys: (none)',
    )
    expect(() => LlmRuntime.Config([])).toThrow('LlmRuntime config must be an object, got an array')
    expect(() => LlmRuntime.Config('x')).toThrow('LlmRuntime config must be an object, got string')
  })
})
