import type { Message, ToolDefinition } from '@warmfold/llm'
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
import type { AnthropicRequestBody } from '../src/serialize-request.ts'
import { DEFAULT_THINKING_BUDGETS } from '../src/config.ts'
import { MAX_BREAKPOINTS, placeBreakpoints } from '../src/place-breakpoints.ts'
import { serializeRequest } from '../src/serialize-request.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { breakpointCount, mountAdapter } from './adapter-fixture.ts'
import { stripCacheControl } from './prompt-cache-simulator.ts'
import { streamReply } from './sse-script.ts'

const origin = { provider: 'anthropic', model: 'claude-test' }
const settings = { provider: 'anthropic', defaultMaxTokens: 1024, thinkingBudgets: DEFAULT_THINKING_BUDGETS }
const tools: ToolDefinition[] = [
  { name: 'read', description: 'Read a file', parameters: { type: 'object' } },
  { name: 'write', description: 'Write a file', parameters: { type: 'object' } },
]
const ephemeral = { type: 'ephemeral' }

function body(messages: Message[], extra: { system?: string; tools?: ToolDefinition[] } = {}): AnthropicRequestBody {
  return serializeRequest({ provider: 'anthropic', model: 'claude-test', messages, ...extra }, settings)
}

/** Every message block as `[role, block]` JSON, markers removed. */
function flatten(request: AnthropicRequestBody): string[] {
  return request.messages.flatMap((message) =>
    message.content.map((block) => JSON.stringify([message.role, stripCacheControl(block)])),
  )
}

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

describe('breakpoint policy', () => {
  const conversation = [
    createUserMessage('go'),
    createAssistantMessage([reasoningBlock('r', 's'), toolCallBlock('c1', 'read', '{}')], origin),
    createToolResultMessage('c1', 'result'),
  ]

  it('marks the end of the system prompt and the last block of the last message', () => {
    const input = body(conversation, { system: 'sys', tools })
    const placed = placeBreakpoints(input, '5m')
    expect(placed.system).toEqual([{ type: 'text', text: 'sys', cache_control: ephemeral }])
    expect(placed.tools).toEqual(input.tools)
    expect(placed.messages.at(-1)!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'result' }], cache_control: ephemeral },
    ])
    expect(placed.messages.slice(0, -1)).toEqual(input.messages.slice(0, -1))
    expect(JSON.stringify(input)).not.toContain('cache_control')
  })

  it('marks the last tool when there is no system prompt, and only the message when there are neither', () => {
    const withTools = placeBreakpoints(body(conversation, { tools }), '5m')
    expect(withTools.tools!.map((tool) => tool.cache_control)).toEqual([undefined, ephemeral])
    expect(breakpointCount(JSON.stringify(withTools))).toBe(2)
    const bare = placeBreakpoints(body(conversation), '5m')
    expect(breakpointCount(JSON.stringify(bare))).toBe(1)
  })

  it('adds the 1h TTL when configured', () => {
    const placed = placeBreakpoints(body(conversation, { system: 'sys' }), '1h')
    expect(placed.system![0]!.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' })
    expect(placed.messages.at(-1)!.content.at(-1)).toMatchObject({ cache_control: { type: 'ephemeral', ttl: '1h' } })
  })

  it('never marks a thinking block: it walks back to the last block that may carry one, into earlier messages if need be', () => {
    const prefill = [
      createUserMessage('go'),
      createAssistantMessage([textBlock('partial'), reasoningBlock('r', 's')], origin),
    ]
    const placed = placeBreakpoints(body(prefill), '5m')
    expect(placed.messages.at(-1)!.content).toEqual([
      { type: 'thinking', thinking: 'r', signature: 's' },
      { type: 'text', text: 'partial', cache_control: ephemeral },
    ])
    const onlyThinking = placeBreakpoints(
      body([createUserMessage('go'), createAssistantMessage([reasoningBlock('r', 's')], origin)]),
      '5m',
    )
    expect(onlyThinking.messages.map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'go', cache_control: ephemeral }],
      [{ type: 'thinking', thinking: 'r', signature: 's' }],
    ])
    const nothing = placeBreakpoints(body([createAssistantMessage([reasoningBlock('r', 's')], origin)]), '5m')
    expect(breakpointCount(JSON.stringify(nothing))).toBe(0)
  })

  it('for any conversation: at most 4 breakpoints, deterministic bytes, and appending never changes earlier blocks', () => {
    const blockArbitrary = fc.oneof(
      fc.string().map((text) => createUserMessage(text === '' ? 'x' : text)),
      fc
        .record({ text: fc.string(), signed: fc.boolean(), args: fc.oneof(fc.constant('{"a":1}'), fc.string()) })
        .map(({ text, signed, args }) =>
          createAssistantMessage(
            [reasoningBlock(text, signed ? 'sig' : undefined), textBlock(text), toolCallBlock('id', 'read', args)],
            origin,
          ),
        ),
      fc.string().map((text) => createToolResultMessage('id', text)),
    )
    fc.assert(
      fc.property(
        fc.array(blockArbitrary, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        fc.boolean(),
        fc.nat(),
        (messages, withSystem, withTools, cut) => {
          const extra = { ...(withSystem ? { system: 'sys' } : {}), ...(withTools ? { tools } : {}) }
          const full = placeBreakpoints(body(messages, extra), '5m')
          const raw = JSON.stringify(full)
          expect(raw).toBe(JSON.stringify(placeBreakpoints(body(messages, extra), '5m')))
          expect(breakpointCount(raw)).toBeLessThanOrEqual(MAX_BREAKPOINTS)
          const marked = full.messages.flatMap((message) => message.content).filter((block) => 'cache_control' in block)
          expect(marked.every((block) => block.type !== 'thinking' && block.type !== 'redacted_thinking')).toBe(true)
          const prefix = placeBreakpoints(body(messages.slice(0, (cut % messages.length) + 1), extra), '5m')
          expect(flatten(full).slice(0, flatten(prefix).length)).toEqual(flatten(prefix))
        },
      ),
      { numRuns: 200 },
    )
  })

  it.each([
    ['system and tools', { system: 'sys', tools }, 2],
    ['tools and no system', { tools }, 2],
    ['system and no tools', { system: 'sys' }, 2],
    ['neither', {}, 1],
  ])('sends the breakpoints on the wire (%s)', async (_name, extra, expected) => {
    const adapter = await mountAdapter(() => streamReply({ blocks: [{ type: 'text', text: 'ok' }] }))
    harnesses.push(adapter)
    await adapter.collect({ ...extra, messages: conversation })
    const [request] = adapter.server.requests
    expect(breakpointCount(request!.rawBody)).toBe(expected)
    expect(request!.body.messages.at(-1).content.at(-1).cache_control).toEqual(ephemeral)
    if ('system' in extra) expect(request!.body.system.at(-1).cache_control).toEqual(ephemeral)
    else if ('tools' in extra) expect(request!.body.tools.at(-1).cache_control).toEqual(ephemeral)
    adapter.assertClean()
  })
})
