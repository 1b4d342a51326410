import { afterEach, describe, expect, it } from 'vitest'
import type { LoopHarness } from './loop-fixture.ts'
import { mountLoop } from './loop-fixture.ts'

/** `value` without its cache_control markers. */
function unmarked(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, member) => (key === 'cache_control' ? undefined : member)))
}

let harness: LoopHarness | undefined
afterEach(async () => {
  await harness?.dispose()
  harness = undefined
})

describe('agent.fork over HTTP (Anthropic Messages)', { timeout: 30_000 }, () => {
  it("the fork's first body is the parent's last body plus the task: every other key equal, the task one more block at the end", async () => {
    harness = await mountLoop({ steps: 3 })
    const agent = await harness.run()
    const result = await agent.fork({ task: 'List every file you read.' })
    expect(result).toMatchObject({ reason: 'finished', answer: 'All done.' })
    const bodies = harness.server.requests.map((request) => JSON.parse(request.rawBody) as Record<string, any>)
    const parent = bodies.at(-2)!
    const fork = bodies.at(-1)!
    const { messages: parentMessages, ...parentRest } = parent
    const { messages: forkMessages, ...forkRest } = fork
    // System (with its breakpoint), tools in order, thinking, max_tokens, stop_sequences, stream.
    expect(forkRest).toEqual(parentRest)
    // The parent's last message is the user turn carrying the tool result; the adapter merges the
    // task (one more user message) into that turn, as the Messages API would: the same messages,
    // the last with one more block at its end.
    expect(forkMessages).toHaveLength(parentMessages.length)
    // The one other difference: the rolling breakpoint moved from the parent's last block to the
    // task (a marker, not prompt bytes; the prefix up to it is read).
    expect(forkMessages.slice(0, -1)).toEqual(parentMessages.slice(0, -1))
    const parentLast = parentMessages.at(-1)
    const forkLast = forkMessages.at(-1)
    expect(parentLast.content.at(-1).type).toBe('tool_result')
    expect(unmarked(forkLast.content.slice(0, -1))).toEqual(unmarked(parentLast.content))
    expect(forkLast.content.at(-1)).toEqual({
      type: 'text',
      text: 'List every file you read.',
      cache_control: { type: 'ephemeral' },
    })
  })
})

describe('a fork asks for the short cache tier (Anthropic: 5 minutes)', { timeout: 30_000 }, () => {
  for (const cacheTtl of ['short', 'inherit'] as const) {
    it(`on a 1-hour model, cacheTtl ${cacheTtl}: the head keeps its 1-hour breakpoint (read as before), the fork's own breakpoint is ${cacheTtl === 'short' ? '5 minutes' : '1 hour'}`, async () => {
      harness = await mountLoop({
        steps: 2,
        model: {
          contextWindow: 8000,
          defaultMaxTokens: 1500,
          efforts: ['off', 'high'],
          defaultEffort: 'off',
          cacheTtl: '1h',
        },
      })
      const agent = await harness.run()
      expect((await agent.fork({ task: 'List every file you read.', cacheTtl })).reason).toBe('finished')
      const [parent, fork] = harness.server.requests
        .slice(-2)
        .map((request) => JSON.parse(request.rawBody) as Record<string, any>)
      expect(fork!.system).toEqual(parent!.system)
      expect(fork!.system.at(-1).cache_control).toEqual({ type: 'ephemeral', ttl: '1h' })
      expect(parent!.messages.at(-1).content.at(-1).cache_control).toEqual({ type: 'ephemeral', ttl: '1h' })
      expect(fork!.messages.at(-1).content.at(-1).cache_control).toEqual(
        cacheTtl === 'short' ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: '1h' },
      )
    })
  }
})
