import { createHash } from 'node:crypto'
import type { GenerateOptions } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  imageBlock,
  PROMPT_CACHE_KEY_MAX_LENGTH,
  promptCacheKeyFor,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { serializeRequest } from '../src/serialize-request.ts'
import type { AdapterHarness, HarnessConfig } from './fixture.ts'
import { collect, finish, MODEL, mountAdapter, request } from './fixture.ts'
import { openaiStream, openaiUsage } from './provider-streams.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
})

async function harness(config: HarnessConfig = {}): Promise<AdapterHarness> {
  const created = await mountAdapter(
    () => ({ sse: openaiStream(MODEL, { text: 'ok' }, openaiUsage(2048, 1024, 1, 0, 512)) }),
    config,
  )
  harnesses.push(created)
  return created
}

const ROUTE = { provider: 'test', model: MODEL }
const CONVERSATION = [
  createUserMessage('Fix the test.'),
  createAssistantMessage([textBlock('Reading.'), toolCallBlock('call_1', 'read', '{"path":"a.ts"}')], ROUTE),
  createToolResultMessage('call_1', 'export const a = 1'),
]
const INSTRUCTION = createUserMessage('Summarize the conversation above.')
const explicit = { mode: 'explicit' }

describe('prompt_cache_key', () => {
  it('is a fixed prefix plus a truncated SHA-256 of the session id: stable, under 64 characters, no user data', () => {
    const key = promptCacheKeyFor('alice@example.com/projects/secret')
    expect(key).toBe(
      `warmfold-${createHash('sha256').update('alice@example.com/projects/secret').digest('hex').slice(0, 32)}`,
    )
    expect(key).not.toContain('alice')
    fc.assert(
      fc.property(fc.string({ maxLength: 500 }), (sessionId) => {
        expect(promptCacheKeyFor(sessionId).length).toBeLessThanOrEqual(PROMPT_CACHE_KEY_MAX_LENGTH)
        expect(promptCacheKeyFor(sessionId)).toBe(promptCacheKeyFor(sessionId))
      }),
    )
    expect(promptCacheKeyFor('a')).not.toBe(promptCacheKeyFor('b'))
  })

  it('dialect openai sends it by default, the same for a conversation and a summary call of one session', async () => {
    const server = await harness({ dialect: 'openai' })
    await collect(server, request(server, { messages: CONVERSATION, sessionId: 'session-42', purpose: 'conversation' }))
    await collect(
      server,
      request(server, { messages: [...CONVERSATION, INSTRUCTION], sessionId: 'session-42', purpose: 'compaction' }),
    )
    await collect(server, request(server, { messages: CONVERSATION, sessionId: 'session-43' }))
    await collect(server, request(server, { messages: CONVERSATION }))
    const [first, summary, other, none] = server.server.requests
    expect(first!.json.prompt_cache_key).toBe(promptCacheKeyFor('session-42'))
    expect(summary!.json.prompt_cache_key).toBe(first!.json.prompt_cache_key)
    expect(other!.json.prompt_cache_key).toBe(promptCacheKeyFor('session-43'))
    // No session id, no key.
    expect(none!.json).not.toHaveProperty('prompt_cache_key')
    for (const recorded of server.server.requests) expect(recorded.body).not.toContain('session-4')
    expect(Object.keys(first!.json)).toEqual(['model', 'messages', 'prompt_cache_key', 'stream', 'stream_options'])
  })

  it("is off with promptCacheKey 'off', off by default for the other dialects, and on when they opt in", async () => {
    const off = await harness({ dialect: 'openai', promptCacheKey: 'off' })
    await collect(off, request(off, { sessionId: 's' }))
    expect(off.server.requests[0]!.json).not.toHaveProperty('prompt_cache_key')
    const generic = await harness({ dialect: 'generic' })
    await collect(generic, request(generic, { sessionId: 's' }))
    expect(generic.server.requests[0]!.json).not.toHaveProperty('prompt_cache_key')
    const optedIn = await harness({ dialect: 'vllm', promptCacheKey: 'session' })
    await collect(optedIn, request(optedIn, { sessionId: 's' }))
    expect(optedIn.server.requests[0]!.json.prompt_cache_key).toBe(promptCacheKeyFor('s'))
  })
})

describe('prompt_cache_retention', () => {
  it('is sent per model and sets the TTL the model reports', async () => {
    const models = {
      [MODEL]: { contextWindow: 1000, promptCacheRetention: '24h' as const },
      memory: { contextWindow: 1000, promptCacheRetention: 'in_memory' as const },
      plain: { contextWindow: 1000 },
      pinned: { contextWindow: 1000, promptCacheRetention: '24h' as const, cacheTtlMs: 3_600_000 },
    }
    const server = await harness({ dialect: 'openai', models })
    await collect(server, request(server))
    await collect(server, request(server, { model: 'memory' }))
    await collect(server, request(server, { model: 'plain' }))
    const [long, memory, plain] = server.server.requests
    expect(long!.json.prompt_cache_retention).toBe('24h')
    expect(memory!.json.prompt_cache_retention).toBe('in_memory')
    expect(plain!.json).not.toHaveProperty('prompt_cache_retention')
    const ttl = async (model: string) => (await server.ctx.llm.resolveModelInfo('test', model)).cacheTtlMs
    expect(await ttl(MODEL)).toBe(86_400_000)
    expect(await ttl('memory')).toBe(300_000)
    expect(await ttl('plain')).toBe(300_000)
    expect(await ttl('pinned')).toBe(3_600_000)
  })

  it('rejects an undocumented value, naming the model', async () => {
    const { parseOpenAICompatibleConfig } = await import('../src/index.ts')
    expect(() =>
      parseOpenAICompatibleConfig({
        provider: 'p',
        baseURL: 'http://127.0.0.1',
        models: { m: { contextWindow: 1, promptCacheRetention: '1h' as never } },
      }),
    ).toThrow(/promptCacheRetention/)
  })
})

describe('explicit cache breakpoints (cacheBreakpoints)', () => {
  const models = { [MODEL]: { contextWindow: 100_000, cacheBreakpoints: true } }

  it('are off by default: no prompt_cache_options, string contents', async () => {
    const server = await harness({ dialect: 'openai' })
    await collect(server, request(server, { system: 'Be brief.', messages: CONVERSATION }))
    const [recorded] = server.server.requests
    expect(recorded!.json).not.toHaveProperty('prompt_cache_options')
    expect(recorded!.body).not.toContain('prompt_cache_breakpoint')
    expect(recorded!.json.messages[0]).toEqual({ role: 'system', content: 'Be brief.' })
  })

  it('mark the system prompt and the last message, in explicit mode', async () => {
    const server = await harness({ dialect: 'openai', models })
    await collect(
      server,
      request(server, { system: 'Be brief.', messages: CONVERSATION, sessionId: 's', maxTokens: 10 }),
    )
    const { json, body } = server.server.requests[0]!
    expect(Object.keys(json)).toEqual([
      'model',
      'messages',
      'max_completion_tokens',
      'prompt_cache_key',
      'prompt_cache_options',
      'stream',
      'stream_options',
    ])
    expect(json.prompt_cache_options).toEqual({ mode: 'explicit' })
    expect(json.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be brief.', prompt_cache_breakpoint: explicit }] },
      { role: 'user', content: [{ type: 'text', text: 'Fix the test.' }] },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a.ts"}' } }],
      },
      {
        role: 'tool',
        tool_call_id: 'call_1',
        content: [{ type: 'text', text: 'export const a = 1', prompt_cache_breakpoint: explicit }],
      },
    ])
    expect(body.split('prompt_cache_breakpoint').length - 1).toBe(2)
  })

  it('never mark an assistant message or a summary instruction: the region end carries the last one', async () => {
    const server = await harness({ dialect: 'openai', models })
    const region = [...CONVERSATION, createAssistantMessage([textBlock('Done.')], ROUTE)]
    await collect(server, request(server, { messages: [...region, INSTRUCTION], purpose: 'compaction' }))
    await collect(
      server,
      request(server, {
        messages: [createUserMessage([textBlock('look'), imageBlock('image/png', 'AAAA')]), INSTRUCTION],
        purpose: 'compaction',
      }),
    )
    const [summary, withImage] = server.server.requests
    const messages = summary!.json.messages
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'Summarize the conversation above.' }],
    })
    expect(messages.at(-2)).toEqual({ role: 'assistant', content: 'Done.' })
    expect(messages.at(-3).content).toEqual([
      { type: 'text', text: 'export const a = 1', prompt_cache_breakpoint: explicit },
    ])
    expect(summary!.body.split('prompt_cache_breakpoint').length - 1).toBe(1)
    expect(withImage!.json.messages[0].content).toEqual([
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' }, prompt_cache_breakpoint: explicit },
    ])
  })

  it('keep a summary request identical to the conversation request up to its last breakpoint', () => {
    const cache = { promptCacheKey: 'session' as const, cacheBreakpoints: true }
    const base: GenerateOptions = {
      provider: 'test',
      model: MODEL,
      system: 'Be brief.',
      messages: CONVERSATION,
      sessionId: 's',
    }
    const conversation = serializeRequest({ ...base, purpose: 'conversation' }, 'openai', cache)
    const summary = serializeRequest(
      { ...base, messages: [...CONVERSATION, INSTRUCTION], purpose: 'compaction' },
      'openai',
      cache,
    )
    expect(JSON.stringify(summary.messages.slice(0, -1))).toBe(JSON.stringify(conversation.messages))
    expect(summary.prompt_cache_key).toBe(conversation.prompt_cache_key)
    // Without the summary purpose the instruction would be the last message and carry the marker.
    const asConversation = serializeRequest({ ...base, messages: [...CONVERSATION, INSTRUCTION] }, 'openai', cache)
    expect(asConversation.messages.at(-1)).toMatchObject({ content: [{ prompt_cache_breakpoint: explicit }] })
  })
})

describe('usage', () => {
  it('maps cache_write_tokens to cacheWriteTokens', async () => {
    const server = await harness({ dialect: 'openai' })
    const chunks = await collect(server, request(server))
    expect(chunks.find((chunk) => chunk.type === 'usage')).toMatchObject({
      usage: { inputTokens: 512, cacheReadTokens: 1024, cacheWriteTokens: 512 },
    })
  })
})
