import { promptCacheKeyFor } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { LoopHarness } from './loop-fixture.ts'
import { mountLoop } from './loop-fixture.ts'

let harness: LoopHarness | undefined
afterEach(async () => {
  await harness?.dispose()
  harness = undefined
})

describe('agent.fork over HTTP (OpenAI Responses)', { timeout: 30_000 }, () => {
  it("the fork's first body is the parent's last body plus one input item: every other key equal, prompt_cache_key included", async () => {
    harness = await mountLoop(3)
    const agent = await harness.run()
    const result = await agent.fork({ task: 'List every file you read.' })
    expect(result).toMatchObject({ reason: 'finished', answer: 'All done.' })
    const bodies = harness.server.requests.map((request) => JSON.parse(request.body) as Record<string, any>)
    const { input: parentInput, ...parentRest } = bodies.at(-2)!
    const { input: forkInput, ...forkRest } = bodies.at(-1)!
    // Instructions, tools in order, reasoning effort, store, include, and the parent's cache key.
    expect(forkRest).toEqual(parentRest)
    expect(forkRest.prompt_cache_key).toBe(promptCacheKeyFor('session'))
    expect(forkInput).toHaveLength(parentInput.length + 1)
    expect(forkInput.slice(0, -1)).toEqual(parentInput)
    expect(forkInput.at(-1)).toMatchObject({ type: 'message', role: 'user' })
    expect(JSON.stringify(forkInput.at(-1))).toContain('List every file you read.')
  })
})
