import type { GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import {
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Kind } from './fixture.ts'
import type { WireBench } from './wire.ts'
import { origin, READ, READ_REORDERED, rich, signed, wireBench } from './wire.ts'

const KINDS = ['compat', 'anthropic'] as const
const benches = {} as Record<Kind, WireBench>
beforeAll(async () => {
  for (const kind of KINDS) benches[kind] = await wireBench(kind)
})
afterAll(async () => {
  for (const kind of KINDS) await benches[kind].close()
})

describe.each(KINDS)('the %s provider on the wire', (kind) => {
  it('sends the body in the snapshot', async () => {
    const raw = await benches[kind].viaAiSdk(rich(kind))
    // The exact bytes (key order included), then the parsed body for a readable diff.
    expect(raw).toMatchSnapshot()
    expect(JSON.parse(raw)).toMatchSnapshot()
  })

  it('sends byte-identical bodies for the same options, whatever the message ids and schema key order (property)', async () => {
    const block = fc.oneof(
      fc.string().map((text) => ({ kind: 'text' as const, text })),
      fc
        .tuple(fc.string(), fc.string({ minLength: 1 }))
        .map(([text, signature]) => ({ kind: 'reasoning' as const, text, signature })),
      fc.jsonValue().map((value) => ({ kind: 'call' as const, args: JSON.stringify({ v: value }) })),
    )
    const turn = fc.record({
      user: fc.string({ minLength: 1 }),
      assistant: fc.array(block, { minLength: 1, maxLength: 3 }),
      result: fc.string(),
    })
    const settings = fc.record({
      system: fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
      temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
      stop: fc.option(fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 2 }), { nil: undefined }),
      maxTokens: fc.option(fc.integer({ min: 1, max: 4096 }), { nil: undefined }),
      reasoningEffort: fc.constantFrom(undefined, 'off', 'high'),
      sessionId: fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(turn, { minLength: 1, maxLength: 3 }), settings, async (turns, extra) => {
        const build = (ids: string, tool: ToolDefinition): GenerateOptions => {
          const messages: Message[] = []
          turns.forEach((step, n) => {
            messages.push(createMessage({ id: `${ids}-u${n}`, role: 'user', content: step.user }))
            const calls: string[] = []
            const blocks = step.assistant.map((part, m) => {
              if (part.kind === 'text') return textBlock(part.text)
              if (part.kind === 'reasoning') return reasoningBlock(part.text, signed(kind, part.signature))
              calls.push(`call_${n}_${m}`)
              return toolCallBlock(`call_${n}_${m}`, 'read', part.args)
            })
            messages.push(createAssistantMessage(blocks, origin, `${ids}-a${n}`))
            for (const call of calls)
              messages.push(createToolResultMessage(call, step.result, { id: `${ids}-${call}` }))
          })
          return { provider: 'ai', model: 'main', tools: [tool], messages, ...definedOnly(extra) }
        }
        // A cap at or below the thinking budget (1024 at effort high on Anthropic) is refused before sending (output-reserve.test.ts).
        fc.pre(kind !== 'anthropic' || extra.reasoningEffort !== 'high' || (extra.maxTokens ?? 2048) > 1024)
        const first = await benches[kind].viaAiSdk(build('x', READ))
        const second = await benches[kind].viaAiSdk(build('y', READ_REORDERED))
        expect(second).toBe(first)
      }),
      { numRuns: 25 },
    )
  })
})

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>
}

it('replays a user message with text blocks only as the first message after the system prompt', async () => {
  const body = JSON.parse(
    await benches.compat.viaAiSdk({ provider: 'ai', model: 'main', system: 'S', messages: [createUserMessage('hi')] }),
  )
  expect(body.messages).toEqual([
    { role: 'system', content: 'S' },
    { role: 'user', content: 'hi' },
  ])
})
