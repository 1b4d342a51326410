import type { ContentBlock, GenerateOptions, Message, ToolDefinition } from '@warmfold/llm'
import {
  canonicalJson,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { commonPrefixLength, PromptRenderer } from '../../src/prefix/index.ts'

const ROUTE = { provider: 'sim', model: 'coder' } as const

function request(messages: readonly Message[], extra: Partial<GenerateOptions> = {}): GenerateOptions {
  return { ...ROUTE, messages, ...extra }
}

/**
 * The prompt as documented, written out independently of `PromptRenderer`: each tool as
 * `{"tool":…}`, the system prompt as `{"system":…}`, the first block of each message as
 * `{"block":…,"role":…}` and every further block as `{"block":…}`, all through `@warmfold/llm`'s
 * `canonicalJson`, concatenated in that order.
 */
function promptText(options: GenerateOptions): string {
  const blocks: string[] = []
  for (const tool of options.tools ?? []) blocks.push(canonicalJson({ tool }))
  if (options.system) blocks.push(canonicalJson({ system: options.system }))
  for (const message of options.messages)
    message.content.forEach((block: ContentBlock, index) => {
      blocks.push(index === 0 ? canonicalJson({ role: message.role, block }) : canonicalJson({ block }))
    })
  return blocks.join('')
}

function commonPrefix(left: string, right: string): number {
  let index = 0
  while (index < left.length && index < right.length && left[index] === right[index]) index++
  return index
}

/** One tool step: an assistant message (text + tool call, two blocks) and its result (one block). */
function toolStep(index: number): Message[] {
  return [
    createAssistantMessage(
      [textBlock(`step ${index}`), toolCallBlock(`call-${index}`, 'read_file', `{"path":"src/f${index}.ts"}`)],
      ROUTE,
    ),
    createToolResultMessage(`call-${index}`, `contents of src/f${index}.ts`),
  ]
}

const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'read_file',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  { name: 'run_tests', description: 'Run the tests.', parameters: { type: 'object', properties: {} } },
  {
    name: 'search',
    description: 'Search the repository.',
    parameters: { type: 'object', properties: { query: { type: 'string' } } },
  },
]

describe('PromptRenderer', () => {
  it('lays out tools, system, then every block of every message, with running offsets', () => {
    const messages = [createUserMessage('Fix the loader.'), ...toolStep(0)]
    const options = request(messages, { tools: TOOLS, system: 'You are careful.' })
    const layout = new PromptRenderer(canonicalJson).layout(options)
    expect(layout.segments.map(({ part, index, blockIndex }) => ({ part, index, blockIndex }))).toEqual([
      { part: 'tools', index: 0, blockIndex: undefined },
      { part: 'tools', index: 1, blockIndex: undefined },
      { part: 'tools', index: 2, blockIndex: undefined },
      { part: 'system', index: 0, blockIndex: undefined },
      { part: 'message', index: 0, blockIndex: 0 },
      { part: 'message', index: 1, blockIndex: 0 },
      { part: 'message', index: 1, blockIndex: 1 },
      { part: 'message', index: 2, blockIndex: 0 },
    ])
    expect(layout.headSegments).toBe(4)
    expect(layout.offsets[0]).toBe(0)
    layout.segments.forEach((segment, index) =>
      expect(layout.offsets[index + 1]).toBe(layout.offsets[index]! + segment.text.length),
    )
    // The concatenated segments are exactly the documented canonical serialization.
    expect(layout.segments.map((segment) => segment.text).join('')).toBe(promptText(options))
    expect(layout.offsets.at(-1)).toBe(promptText(options).length)
    // The first block of a message carries its role, later blocks do not.
    expect(layout.segments[5]!.text).toBe('{"block":{"text":"step 0","type":"text"},"role":"assistant"}')
    expect(layout.segments[6]!.text).toBe(
      '{"block":{"arguments":"{\\"path\\":\\"src/f0.ts\\"}","id":"call-0","name":"read_file","type":"tool-call"}}',
    )
  })

  it('has no head without tools and system, and renders an empty request as an empty prompt', () => {
    const renderer = new PromptRenderer(canonicalJson)
    const layout = renderer.layout(request([createUserMessage('hi')]))
    expect(layout.headSegments).toBe(0)
    expect(layout.segments[0]).toMatchObject({ part: 'message', index: 0, blockIndex: 0 })
    expect(renderer.layout(request([]))).toEqual({ segments: [], offsets: [0], headSegments: 0 })
    // An empty system prompt sends nothing, like none.
    expect(renderer.layout(request([], { system: '' })).segments).toEqual([])
  })

  it('leaves message ids, sources and per-request fields out of the prompt', () => {
    const renderer = new PromptRenderer(canonicalJson)
    const first = renderer.layout(
      request([createUserMessage('same words', 'id-1')], { sessionId: 'a', purpose: 'conversation', maxTokens: 10 }),
    )
    const second = renderer.layout(
      request([createUserMessage('same words', 'id-2')], { sessionId: 'b', purpose: 'compaction', maxTokens: 99 }),
    )
    expect(second.segments.map((segment) => segment.text)).toEqual(first.segments.map((segment) => segment.text))
    expect(second.segments.map((segment) => segment.id)).toEqual(first.segments.map((segment) => segment.id))
  })

  it('is deterministic: equal ids exactly for equal texts, stable across layouts and renderers', () => {
    const options = request([createUserMessage('a'), createUserMessage('b'), createUserMessage('a')], {
      tools: TOOLS,
      system: 's',
    })
    const renderer = new PromptRenderer(canonicalJson)
    const first = renderer.layout(options)
    const again = renderer.layout(options)
    expect(again).toEqual(first)
    expect(new PromptRenderer(canonicalJson).layout(options).segments.map((segment) => segment.text)).toEqual(
      first.segments.map((segment) => segment.text),
    )
    const [, , , , a, b, a2] = first.segments
    expect(a2!.id).toBe(a!.id)
    expect(b!.id).not.toBe(a!.id)
    const ids = new Map<string, number>()
    for (const segment of first.segments) {
      if (ids.has(segment.text)) expect(segment.id).toBe(ids.get(segment.text))
      else expect([...ids.values()]).not.toContain(segment.id)
      ids.set(segment.text, segment.id)
    }
  })

  it('renders two structurally equal tool lists the same whatever their key insertion order', () => {
    const forward: ToolDefinition[] = [
      {
        name: 'edit',
        description: 'Edit a file.',
        parameters: {
          type: 'object',
          properties: { path: { type: 'string' }, text: { type: 'string' } },
          required: ['path'],
        },
      },
    ]
    const backward: ToolDefinition[] = [
      {
        parameters: {
          required: ['path'],
          properties: { text: { type: 'string' }, path: { type: 'string' } },
          type: 'object',
        },
        description: 'Edit a file.',
        name: 'edit',
      },
    ]
    expect(JSON.stringify(forward)).not.toBe(JSON.stringify(backward))
    const renderer = new PromptRenderer(canonicalJson)
    const left = renderer.layout(request([], { tools: forward }))
    const right = renderer.layout(request([], { tools: backward }))
    expect(right.segments).toEqual(left.segments)
  })

  it('is independent of key order for any JSON-like tool parameters (property)', () => {
    const json = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 4 }),
      fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean()),
      { maxKeys: 6 },
    )
    fc.assert(
      fc.property(json, (parameters) => {
        const reversed = Object.fromEntries(Object.entries(parameters).toReversed())
        const renderer = new PromptRenderer(canonicalJson)
        const left = renderer.layout(request([], { tools: [{ name: 't', description: 'd', parameters }] }))
        const right = renderer.layout(request([], { tools: [{ parameters: reversed, description: 'd', name: 't' }] }))
        expect(right.segments).toEqual(left.segments)
      }),
    )
  })

  it('caches the segments of a frozen message and re-renders a mutable one', () => {
    const renderer = new PromptRenderer(canonicalJson)
    // A frozen message is immutable by contract; its content array is left mutable here only to
    // observe that the renderer does not serialize it a second time.
    const frozenContent = [{ type: 'text' as const, text: 'first' }]
    const frozen = Object.freeze({
      id: 'f',
      role: 'user' as const,
      content: frozenContent,
      source: { kind: 'user' as const },
    }) as Message
    const mutableContent = [{ type: 'text' as const, text: 'first' }]
    const mutable = {
      id: 'm',
      role: 'user' as const,
      content: mutableContent,
      source: { kind: 'user' as const },
    } as Message
    const before = {
      frozen: renderer.layout(request([frozen])).segments[0]!,
      mutable: renderer.layout(request([mutable])).segments[0]!,
    }
    frozenContent[0] = { type: 'text', text: 'second' }
    mutableContent[0] = { type: 'text', text: 'second' }
    expect(renderer.layout(request([frozen])).segments[0]).toEqual(before.frozen)
    expect(renderer.layout(request([mutable])).segments[0]!.text).toContain('second')
    expect(renderer.layout(request([mutable])).segments[0]!.id).not.toBe(before.mutable.id)
  })

  it('re-renders a mutable tool list that changed in place, and caches a frozen one', () => {
    const renderer = new PromptRenderer(canonicalJson)
    const tools: ToolDefinition[] = [TOOLS[0]!]
    expect(renderer.layout(request([], { tools })).segments).toHaveLength(1)
    tools.push(TOOLS[1]!)
    const grown = renderer.layout(request([], { tools }))
    expect(grown.segments).toHaveLength(2)
    expect(grown.segments.map((segment) => segment.text).join('')).toBe(promptText(request([], { tools })))
    const frozen = Object.freeze([TOOLS[0]!, TOOLS[2]!])
    expect(renderer.layout(request([], { tools: frozen })).segments.map((segment) => segment.id)).toEqual(
      renderer.layout(request([], { tools: frozen })).segments.map((segment) => segment.id),
    )
  })

  it('renders assistant messages with several blocks one segment per block', () => {
    const assistant = createAssistantMessage(
      [textBlock('a'), textBlock('b'), toolCallBlock('c', 'search', '{}')],
      ROUTE,
    )
    const layout = new PromptRenderer(canonicalJson).layout(request([assistant]))
    expect(layout.segments.map((segment) => segment.blockIndex)).toEqual([0, 1, 2])
    expect(layout.segments.every((segment) => segment.index === 0 && segment.part === 'message')).toBe(true)
  })
})

describe('commonPrefixLength', () => {
  it('counts UTF-16 code units of the common prefix', () => {
    expect(commonPrefixLength('', 'abc')).toBe(0)
    expect(commonPrefixLength('abc', 'abc')).toBe(3)
    expect(commonPrefixLength('abcd', 'abxd')).toBe(2)
    expect(commonPrefixLength('ab', 'abc')).toBe(2)
    expect(commonPrefixLength('\u{1F600}a', '\u{1F600}b')).toBe(2)
    fc.assert(
      fc.property(fc.string(), fc.string(), (left, right) => {
        expect(commonPrefixLength(left, right)).toBe(commonPrefix(left, right))
      }),
    )
  })
})
