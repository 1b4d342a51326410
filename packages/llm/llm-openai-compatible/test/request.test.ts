import type { GenerateOptions, ToolDefinition } from '@warmfold/llm'
import {
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  imageBlock,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { Dialect } from '../src/index.ts'
import { KEYLESS_PLACEHOLDER } from '../src/chat-completions-adapter.ts'
import type { AdapterHarness, HarnessConfig } from './fixture.ts'
import { collect, finish, MODEL, mountAdapter, request, SECRET_KEY } from './fixture.ts'
import { openaiStream, openaiUsage } from './provider-streams.ts'
import type { RecordedRequest } from '@warmfold/test-utils'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
})

async function harness(config: HarnessConfig = {}): Promise<AdapterHarness> {
  const created = await mountAdapter(
    () => ({ sse: openaiStream(MODEL, { text: 'ok' }, openaiUsage(10, 0, 1, 0)) }),
    config,
  )
  harnesses.push(created)
  return created
}

/** Sends `extra` through `dialect` and returns what the server received. */
async function sent(dialect: Dialect, extra: Partial<GenerateOptions> = {}): Promise<RecordedRequest> {
  const server = await harness({ dialect })
  await collect(server, request(server, extra))
  return server.server.requests[0]!
}

const ROUTE = { provider: 'test', model: MODEL }
const TOOLS: ToolDefinition[] = [
  {
    name: 'read',
    description: 'Read a file',
    parameters: { properties: { path: { type: 'string' } }, required: ['path'], type: 'object' },
  },
  { name: 'write', description: 'Write a file', parameters: { type: 'object' } },
]
const CONVERSATION = [
  createUserMessage('Fix the test.'),
  createAssistantMessage(
    [reasoningBlock('First, read it.'), textBlock('Reading.'), toolCallBlock('call_1', 'read', '{"path":  "a.ts"}')],
    ROUTE,
  ),
  createToolResultMessage('call_1', 'export const a = 1'),
  createAssistantMessage([reasoningBlock('Now write.'), toolCallBlock('call_2', 'write', '{}')], ROUTE),
  createToolResultMessage('call_2', [textBlock('written'), imageBlock('image/png', 'iVBORw0KGgo=')], { isError: true }),
  createAssistantMessage([textBlock('Done.')], ROUTE),
]

describe('request body', () => {
  it('keys come in a fixed order; nothing per-request (purpose, sessionId, ids) is sent', async () => {
    const recorded = await sent('deepseek', {
      system: 'Be brief.',
      tools: TOOLS,
      reasoningEffort: 'max',
      temperature: 0.3,
      stop: ['<halt>'],
      maxTokens: 99,
      purpose: 'conversation',
      sessionId: 'session-42',
    })
    expect(Object.keys(recorded.json)).toEqual([
      'model',
      'messages',
      'tools',
      'thinking',
      'reasoning_effort',
      'temperature',
      'stop',
      'max_tokens',
      'stream',
      'stream_options',
    ])
    expect(recorded.json.stream_options).toEqual({ include_usage: true })
    expect(recorded.body).not.toContain('session-42')
    expect(recorded.body).not.toContain('conversation')
    expect(recorded.headers['content-type']).toBe('application/json')
    expect(recorded.url).toBe('/v1/chat/completions')
  })

  it('the same options give the same bytes, every time', async () => {
    const server = await harness({ dialect: 'deepseek' })
    const options = request(server, {
      system: 'Be brief.',
      tools: TOOLS,
      messages: CONVERSATION,
      reasoningEffort: 'high',
      temperature: 0,
    })
    await collect(server, options)
    await collect(server, { ...options, sessionId: 'another', purpose: 'compaction' })
    expect(server.server.requests[1]!.body).toBe(server.server.requests[0]!.body)
  })

  it('tools keep their order and their parameters exactly as given', async () => {
    const recorded = await sent('generic', { tools: TOOLS })
    expect(recorded.json.tools).toEqual(TOOLS.map((tool) => ({ type: 'function', function: tool })))
    expect(recorded.body).toContain(
      '"parameters":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}',
    )
    expect(recorded.body.indexOf('"name":"read"')).toBeLessThan(recorded.body.indexOf('"name":"write"'))
  })

  it('maps messages: system first, raw tool arguments, tool results, null content for tool-call-only turns, image placeholder', async () => {
    const recorded = await sent('deepseek', { system: 'Be brief.', messages: CONVERSATION })
    expect(recorded.json.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Fix the test.' },
      {
        role: 'assistant',
        content: 'Reading.',
        reasoning_content: 'First, read it.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":  "a.ts"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'export const a = 1' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'Now write.',
        tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'write', arguments: '{}' } }],
      },
      {
        role: 'tool',
        tool_call_id: 'call_2',
        content: 'written\n[image (image/png) omitted: chat completions tool messages carry text only]',
      },
      { role: 'assistant', content: 'Done.' },
    ])
    expect(recorded.body).toContain(String.raw`"arguments":"{\"path\":  \"a.ts\"}"`)
  })

  it('user text blocks are joined with a newline; images become data-URL parts', async () => {
    const recorded = await sent('generic', {
      messages: [
        createUserMessage([textBlock('one'), textBlock('two')]),
        createUserMessage([textBlock('look:'), imageBlock('image/jpeg', '/9j/4AAQ')]),
        createMessage({ role: 'system', content: [textBlock('a'), textBlock('b')] }),
      ],
    })
    expect(recorded.json.messages).toEqual([
      { role: 'user', content: 'one\ntwo' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look:' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
        ],
      },
      { role: 'system', content: 'a\nb' },
    ])
  })

  it('replays reasoning_content for deepseek, vllm and llamacpp, never for openai or generic', async () => {
    for (const [dialect, replays] of [
      ['deepseek', true],
      ['vllm', true],
      ['llamacpp', true],
      ['openai', false],
      ['generic', false],
    ] as const) {
      const recorded = await sent(dialect, { messages: CONVERSATION })
      const assistant = recorded.json.messages.find((message: { role: string }) => message.role === 'assistant')
      expect('reasoning_content' in assistant, dialect).toBe(replays)
    }
  })
})

describe('effort and output cap per dialect', () => {
  it('deepseek: thinking enabled + reasoning_effort; off disables thinking; no effort sends neither', async () => {
    expect((await sent('deepseek', { reasoningEffort: 'max' })).json).toMatchObject({
      thinking: { type: 'enabled' },
      reasoning_effort: 'max',
    })
    const off = (await sent('deepseek', { reasoningEffort: 'off' })).json
    expect(off.thinking).toEqual({ type: 'disabled' })
    expect('reasoning_effort' in off).toBe(false)
    const none = (await sent('deepseek')).json
    expect('thinking' in none || 'reasoning_effort' in none).toBe(false)
    expect((await sent('deepseek', { maxTokens: 64 })).json.max_tokens).toBe(64)
  })

  it('openai: reasoning_effort and max_completion_tokens', async () => {
    const body = (await sent('openai', { reasoningEffort: 'high', maxTokens: 64 })).json
    expect(body).toMatchObject({ reasoning_effort: 'high', max_completion_tokens: 64 })
    expect('max_tokens' in body || 'thinking' in body).toBe(false)
  })

  for (const dialect of ['vllm', 'llamacpp', 'generic'] as const) {
    it(`${dialect}: reasoning_effort only when given, max_tokens`, async () => {
      expect((await sent(dialect, { reasoningEffort: 'low', maxTokens: 64 })).json).toMatchObject({
        reasoning_effort: 'low',
        max_tokens: 64,
      })
      const plain = (await sent(dialect)).json
      expect(Object.keys(plain)).toEqual(['model', 'messages', 'stream', 'stream_options'])
    })
  }

  it('temperature and stop as given; an empty stop list or tool list is left out', async () => {
    const body = (await sent('generic', { temperature: 0, stop: ['a', 'b'] })).json
    expect(body).toMatchObject({ temperature: 0, stop: ['a', 'b'] })
    const empty = (await sent('generic', { stop: [], tools: [] })).json
    expect('stop' in empty || 'tools' in empty).toBe(false)
  })
})

describe('headers', () => {
  it('sends Authorization: Bearer <key> when a key is configured, and the extra headers', async () => {
    const server = await harness({ apiKey: SECRET_KEY, headers: { 'X-Team': 'compaction' } })
    await collect(server, request(server))
    expect(server.server.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET_KEY}`)
    expect(server.server.requests[0]!.headers['x-team']).toBe('compaction')
  })

  it('a keyless server gets no Authorization header at all (the SDK placeholder is never sent)', async () => {
    const server = await harness()
    await collect(server, request(server))
    const recorded = server.server.requests[0]!
    expect(recorded.headers.authorization).toBeUndefined()
    expect(
      Object.values(recorded.headers).some((value) => String(value).includes(`Bearer ${KEYLESS_PLACEHOLDER}`)),
    ).toBe(false)
  })

  it('a keyless config may send its own Authorization header through `headers`', async () => {
    const server = await harness({ headers: { authorization: 'Basic dXNlcjpwYXNz' } })
    await collect(server, request(server))
    expect(server.server.requests[0]!.headers.authorization).toBe('Basic dXNlcjpwYXNz')
  })
})
