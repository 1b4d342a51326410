import type { GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import {
  canonicalJson,
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
import { wireBench } from './wire.ts'

const origin = { provider: 'ai', model: 'main' }
const KINDS = ['compat', 'anthropic'] as const
const benches = {} as Record<Kind, WireBench>
beforeAll(async () => {
  for (const kind of KINDS) benches[kind] = await wireBench(kind)
})
afterAll(async () => {
  for (const kind of KINDS) await benches[kind].close()
})

const READ: ToolDefinition = {
  name: 'read',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}
const READ_REORDERED: ToolDefinition = {
  name: 'read',
  description: 'Read a file',
  parameters: { required: ['path'], properties: { path: { type: 'string' } }, type: 'object' },
}

/** A signature as this adapter writes it for `kind` (the Anthropic provider replays only signed thinking). */
const signed = (kind: Kind, signature: string) =>
  kind === 'anthropic' ? JSON.stringify({ anthropic: { signature } }) : undefined

function conversation(kind: Kind, ids = 'a'): Message[] {
  return [
    createMessage({ id: `${ids}-1`, role: 'user', content: 'Look at a.ts' }),
    createAssistantMessage(
      [
        reasoningBlock('I should read it.', signed(kind, 'sig-1')),
        textBlock('Reading.'),
        toolCallBlock('call_1', 'read', '{"path": "a.ts",  "z":1}'),
      ],
      origin,
      `${ids}-2`,
    ),
    createToolResultMessage('call_1', 'export const a = 1', { id: `${ids}-3` }),
  ]
}

function rich(kind: Kind): GenerateOptions {
  return {
    provider: 'ai',
    model: 'main',
    system: 'You are a coding agent.',
    tools: [READ],
    reasoningEffort: 'high',
    temperature: 0.5,
    stop: ['<halt>'],
    maxTokens: kind === 'anthropic' ? 1524 : 500,
    sessionId: 'session-1',
    messages: conversation(kind),
  }
}

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

describe('compared with the direct adapters (same options, same server)', () => {
  it('@ai-sdk/openai-compatible sends what ChatCompletionsAdapter sends, apart from the documented differences', async () => {
    const viaAiSdk = JSON.parse(await benches.compat.viaAiSdk(rich('compat')))
    const viaDirect = JSON.parse(await benches.compat.viaDirect(rich('compat')))
    expect(differingKeys(viaAiSdk, viaDirect)).toEqual(['max_completion_tokens', 'max_tokens', 'messages'])
    // The AI SDK names the output cap max_tokens (the direct adapter max_completion_tokens) and
    // replays reasoning as reasoning_content; both send the same session prompt_cache_key.
    expect(viaAiSdk.max_tokens).toBe(viaDirect.max_completion_tokens)
    expect(viaAiSdk.prompt_cache_key).toMatch(/^warmfold-[0-9a-f]{32}$/)
    expect(viaAiSdk.prompt_cache_key).toBe(viaDirect.prompt_cache_key)
    const withoutReasoning = viaAiSdk.messages.map(
      ({ reasoning_content: _reasoning, ...message }: Record<string, unknown>) => message,
    )
    expect(canonicalJson(withoutReasoning)).toBe(canonicalJson(viaDirect.messages))
    expect(viaAiSdk.messages[2].reasoning_content).toBe('I should read it.')
    // The raw argument string reaches the wire byte for byte through both.
    expect(viaAiSdk.messages[2].tool_calls[0].function.arguments).toBe('{"path": "a.ts",  "z":1}')
    expect(canonicalJson(viaAiSdk.tools)).toBe(canonicalJson(viaDirect.tools))
  })

  it('@ai-sdk/anthropic sends what AnthropicLlmAdapter sends, apart from the documented differences', async () => {
    const viaAiSdk = JSON.parse(await benches.anthropic.viaAiSdk(rich('anthropic')))
    const options = rich('anthropic')
    const direct = {
      ...options,
      messages: options.messages.map((message) => ({
        ...message,
        content: message.content.map((block) =>
          block.type === 'reasoning' ? reasoningBlock(block.text, 'sig-1') : block,
        ),
      })),
    }
    const viaDirect = JSON.parse(await benches.anthropic.viaDirect(direct))
    expect(differingKeys(viaAiSdk, viaDirect)).toEqual(['messages', 'temperature', 'tools'])
    // The provider adds the thinking budget to maxOutputTokens, which the adapter took off maxTokens:
    // both send max_tokens = maxTokens, thinking included. The provider drops temperature while
    // thinking is on, marks every tool eager_input_streaming, and sends a text-only tool result as a string.
    expect(viaAiSdk.max_tokens).toBe(1524)
    expect(viaDirect.max_tokens).toBe(1524)
    expect(viaAiSdk.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
    expect(viaAiSdk).not.toHaveProperty('temperature')
    expect(
      viaAiSdk.tools.map(({ eager_input_streaming, ...tool }: Record<string, unknown>) => [
        eager_input_streaming,
        canonicalJson(tool),
      ]),
    ).toEqual(viaDirect.tools.map((tool: unknown) => [true, canonicalJson(tool)]))
    const asArrays = viaAiSdk.messages.map((message: { role: string; content: Array<Record<string, unknown>> }) => ({
      ...message,
      content: message.content.map((block) =>
        block.type === 'tool_result' && typeof block.content === 'string'
          ? { ...block, content: [{ type: 'text', text: block.content }] }
          : block,
      ),
    }))
    expect(canonicalJson(asArrays)).toBe(canonicalJson(viaDirect.messages))
    // The same two breakpoints: end of the system prompt, last block of the last message.
    expect(viaAiSdk.system).toEqual(viaDirect.system)
    expect((await benches.anthropic.viaAiSdk(options)).split('"cache_control"')).toHaveLength(3)
  })
})

function differingKeys(left: Record<string, unknown>, right: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(left), ...Object.keys(right)])
  return [...keys].filter((key) => canonicalJson(left[key] ?? null) !== canonicalJson(right[key] ?? null)).toSorted()
}

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
