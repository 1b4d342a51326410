import { PromptRenderer } from '@warmfold/cache-ledger/prefix'
import type { GenerateOptions } from '@warmfold/llm'
import { canonicalJson, createAssistantMessage, createUserMessage, textBlock } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { costFloor, PRICE_PROFILES } from '../src/index.ts'

const system = 'You are a coding agent working on a small repository.'
const user = createUserMessage('Fix the failing test in test/add.test.ts.')
const answer = createAssistantMessage([textBlock('The add function subtracts; I will fix it.')], {
  provider: 'sim',
  model: 'coder',
})
const followup = createUserMessage('Thanks. Now run the whole suite.')
const instruction = createUserMessage('Summarize the conversation so far.')
const t = (chars: number) => Math.ceil(chars / 4)
const whole = (chars: number) => Math.floor(chars / 4)
const conversation = (messages: GenerateOptions['messages'], effort = 'high'): GenerateOptions => ({
  provider: 'sim',
  model: 'coder',
  reasoningEffort: effort,
  system,
  messages,
})

describe('costFloor', () => {
  // R1 ⊂ R2 ⊂ R3 as prompts; R3 has another effort (a summary call that changed the envelope).
  const requests = [
    conversation([user]),
    conversation([user, answer, followup]),
    conversation([user, answer, followup, instruction], 'max'),
  ]
  const outputs = [11, 13, 17]
  const renderer = new PromptRenderer(canonicalJson)
  const [p1, p2, p3] = requests.map((request) => renderer.layout(request).offsets.at(-1) as number) as [
    number,
    number,
    number,
  ]

  it('bills every prompt token once (a write when a later request reads it) and every repeat as a read, envelope ignored', () => {
    // R1: nothing cached; its whole tokens are read by R2, so written; a partial last token is plain input.
    // R2: reads R1's whole tokens; writes up to what R3 reads (all of R2); the rest is plain input.
    // R3: reads R2's whole tokens although its effort differs; nothing later reads its instruction.
    const expected = [
      { cachedTokens: 0, uncachedTokens: t(p1), cacheWriteTokens: whole(p1), outputTokens: 11 },
      {
        cachedTokens: whole(p1),
        uncachedTokens: t(p2) - whole(p1),
        cacheWriteTokens: whole(p2) - whole(p1),
        outputTokens: 13,
      },
      { cachedTokens: whole(p2), uncachedTokens: t(p3) - whole(p2), cacheWriteTokens: 0, outputTokens: 17 },
    ]
    const floor = costFloor(requests, outputs, PRICE_PROFILES['anthropic-5m'])
    expect(floor.requests).toEqual(expected)
    const plain = t(p1) - whole(p1) + (t(p2) - whole(p2)) + (t(p3) - whole(p2))
    const reads = whole(p1) + whole(p2)
    const writes = whole(p2)
    expect(floor.cost.uncachedInput).toBe(plain)
    expect(floor.cost.cacheRead).toBeCloseTo(reads * 0.1, 9)
    expect(floor.cost.cacheWrite).toBeCloseTo(writes * 1.25, 9)
    expect(floor.cost.output).toBe((11 + 13 + 17) * 5)
    expect(floor.cost.total).toBeCloseTo(plain + reads * 0.1 + writes * 1.25 + 41 * 5, 9)
  })

  it('shares nothing between unrelated prompts beyond their common bytes', () => {
    const other: GenerateOptions = {
      provider: 'sim',
      model: 'coder',
      system: 'Zzz',
      messages: [createUserMessage('Another task entirely.')],
    }
    const floor = costFloor([requests[0] as GenerateOptions, other], [0, 0], PRICE_PROFILES.deepseek)
    const shared = '{"system":"'.length // the canonical system segment's opening bytes are the same
    expect(floor.requests[1]?.cachedTokens).toBe(Math.floor(shared / 4))
    expect(floor.requests[0]?.cacheWriteTokens).toBe(Math.floor(shared / 4))
  })

  it('refuses output counts that do not pair with the requests', () => {
    expect(() => costFloor(requests, [1, 2], PRICE_PROFILES.openai)).toThrow(
      'costFloor: 3 requests but 2 output counts',
    )
  })
})
