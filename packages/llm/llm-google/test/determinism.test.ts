import type { GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { GoogleLlmAdapter, parseGoogleConfig } from '../src/index.ts'
import { disposeAll, MODEL, MODEL_3, MODELS, mountAdapter, TEST_KEY } from './fixture.ts'
import { geminiReply } from './gemini-stream.ts'

afterEach(disposeAll)

const origin = { provider: 'google', model: MODEL_3 }
const text = fc.string({ maxLength: 40 })
const signature = fc.option(fc.base64String({ minLength: 4, maxLength: 16 }), { nil: undefined })

/** A conversation of user turns and model turns whose calls are answered, ids unique. */
const conversation = fc
  .array(
    fc.record({
      user: text,
      thought: fc.option(text, { nil: undefined }),
      answer: text,
      signature,
      calls: fc.array(
        fc.record({
          args: fc.dictionary(
            fc.string({ minLength: 1, maxLength: 5 }),
            fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
          ),
          signature,
          result: text,
        }),
        { maxLength: 3 },
      ),
    }),
    { minLength: 1, maxLength: 5 },
  )
  .map((turns) => {
    const messages: Message[] = []
    let id = 0
    for (const turn of turns) {
      messages.push(createUserMessage(turn.user === '' ? 'x' : turn.user))
      const calls = turn.calls.map((call) => ({ ...call, id: `fc-${id++}` }))
      messages.push(
        createAssistantMessage(
          [
            ...(turn.thought === undefined ? [] : [reasoningBlock(turn.thought, turn.signature)]),
            textBlock(turn.answer || 'ok'),
            ...calls.map((call) => toolCallBlock(call.id, 'read', JSON.stringify(call.args), call.signature)),
          ],
          origin,
        ),
      )
      for (const call of calls) messages.push(createToolResultMessage(call.id, call.result))
    }
    return messages
  })

const options = fc.record({
  messages: conversation,
  model: fc.constantFrom(MODEL, MODEL_3),
  system: fc.option(text, { nil: undefined }),
  temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
  stop: fc.option(fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 2 }), { nil: undefined }),
  maxTokens: fc.option(fc.integer({ min: 1, max: 65536 }), { nil: undefined }),
  effort: fc.constantFrom(undefined, 'low', 'high'),
  tools: fc.boolean(),
})

const TOOLS: ToolDefinition[] = [
  {
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
  { name: 'write', description: 'Write', parameters: { properties: { text: { type: 'string' } }, type: 'object' } },
]

type Input = typeof options extends fc.Arbitrary<infer T> ? T : never

function generateOptions(input: Input): GenerateOptions {
  return {
    provider: 'google',
    model: input.model,
    messages: input.messages,
    ...(input.system ? { system: input.system } : {}),
    ...(input.temperature === undefined ? {} : { temperature: input.temperature }),
    ...(input.stop === undefined ? {} : { stop: input.stop }),
    ...(input.maxTokens === undefined ? {} : { maxTokens: input.maxTokens }),
    ...(input.effort === undefined ? {} : { reasoningEffort: input.effort }),
    ...(input.tools ? { tools: TOOLS } : {}),
  }
}

// 80 calls over HTTP: a few seconds alone, more on a loaded machine, so not the default 5 s.
describe('determinism (C1 on the wire)', { timeout: 30_000 }, () => {
  it('sends the same bytes for the same options, and exactly the body request() describes', async () => {
    const adapter = await mountAdapter(() => geminiReply({ parts: [{ text: 'ok' }] }), { maxRetries: 0 })
    const direct = new GoogleLlmAdapter(parseGoogleConfig({ apiKey: TEST_KEY, models: MODELS }), TEST_KEY)
    await fc.assert(
      fc.asyncProperty(options, async (input) => {
        const call = generateOptions(input)
        const before = adapter.server.requests.length
        await adapter.collect(call)
        await adapter.collect({
          ...call,
          messages: call.messages.map((message) => ({ ...message, id: `${message.id}-copy` })),
          purpose: 'compaction',
          sessionId: 'other',
        })
        const [first, second] = adapter.server.requests.slice(before)
        expect(second!.body).toBe(first!.body)
        // The SDK re-orders keys into its own order; request() is written in that order, so the bytes match.
        expect(first!.body).toBe(JSON.stringify(direct.request(call)))
      }),
      { numRuns: 40 },
    )
  })
})
