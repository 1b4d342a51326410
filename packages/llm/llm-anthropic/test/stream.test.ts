import { createUserMessage } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { finishReason } from '../src/map-stream.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { MODEL, mountAdapter, TEST_KEY } from './adapter-fixture.ts'
import type { Responder } from './anthropic-test-server.ts'
import { blockEvents, messageStart, streamReply } from './sse-script.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harness(responder: Responder, config: Record<string, unknown> = {}): Promise<AdapterHarness> {
  const created = await mountAdapter(responder, config)
  harnesses.push(created)
  return created
}

describe('streaming response mapping', () => {
  it('maps thinking (with its signature), text and tool_use blocks, usage and the finish reason', async () => {
    const adapter = await harness(() =>
      streamReply({
        blocks: [
          { type: 'thinking', thinking: 'The user wants a file.', signature: 'EqQBCkYIBxgCKkD' },
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'toolu_01', name: 'read', json: '{"path": "src/a.ts"}' },
        ],
        stopReason: 'tool_use',
        startUsage: {
          input_tokens: 12,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 200,
          output_tokens: 1,
        },
        deltaUsage: { output_tokens: 57 },
      }),
    )
    const chunks = await adapter.collect({ reasoningEffort: 'high', maxTokens: 16_000 })
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, delta: 'The user wa' },
      { type: 'reasoning-delta', index: 0, delta: 'nts a file.' },
      { type: 'block-end', index: 0, signature: 'EqQBCkYIBxgCKkD' },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, delta: 'Readin' },
      { type: 'text-delta', index: 1, delta: 'g it.' },
      { type: 'block-end', index: 1 },
      { type: 'block-start', index: 2, blockType: 'tool-call', id: 'toolu_01', name: 'read' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"path": "' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: 'src/a.ts"}' },
      { type: 'block-end', index: 2 },
      {
        type: 'usage',
        usage: {
          inputTokens: 12,
          cacheReadTokens: 1000,
          cacheWriteTokens: 200,
          outputTokens: 57,
          raw: { input_tokens: 12, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 57 },
        },
      },
      { type: 'finish', reason: 'tool-calls' },
    ])
  })

  it('assembles into content the next request replays byte for byte', async () => {
    const adapter = await harness((_request, index) =>
      index === 0
        ? streamReply({
            blocks: [
              { type: 'thinking', thinking: 'plan', signature: 'sig==' },
              { type: 'tool_use', id: 'toolu_9', name: 'read', json: '{"b": 1, "a": 2}' },
            ],
            stopReason: 'tool_use',
          })
        : streamReply({ blocks: [{ type: 'text', text: 'done' }] }),
    )
    const first = await adapter.ctx.llm.generate({
      provider: 'anthropic',
      model: MODEL,
      reasoningEffort: 'high',
      maxTokens: 16_000,
      messages: [createUserMessage('go')],
    })
    expect(first.content).toEqual([
      { type: 'reasoning', text: 'plan', signature: 'sig==' },
      { type: 'tool-call', id: 'toolu_9', name: 'read', arguments: '{"b": 1, "a": 2}' },
    ])
    await adapter.collect({
      reasoningEffort: 'high',
      maxTokens: 16_000,
      messages: [
        createUserMessage('go'),
        {
          id: 'a',
          role: 'assistant',
          content: first.content,
          source: { kind: 'model', provider: 'anthropic', model: MODEL },
        },
      ],
    })
    expect(adapter.server.requests[1]!.rawBody).toContain(
      '{"role":"assistant","content":[{"type":"thinking","thinking":"plan","signature":"sig=="},{"type":"tool_use","id":"toolu_9","name":"read","input":{"b":1,"a":2},"cache_control":{"type":"ephemeral"}}]}',
    )
  })

  it('skips block types it cannot represent and a tool input that arrives whole', async () => {
    const adapter = await harness(() => ({
      kind: 'stream',
      events: [
        messageStart({ input_tokens: 3, output_tokens: 1 }),
        ...blockEvents({ type: 'redacted_thinking', data: 'opaque' }, 0),
        {
          event: 'content_block_start',
          data: {
            type: 'content_block_start',
            index: 1,
            content_block: { type: 'tool_use', id: 't', name: 'n', input: { q: 1 } },
          },
        },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
        {
          event: 'message_delta',
          data: {
            type: 'message_delta',
            delta: { stop_reason: 'refusal', stop_sequence: null },
            usage: { output_tokens: 4 },
          },
        },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ],
    }))
    const chunks = await adapter.collect()
    expect(chunks.filter((chunk) => chunk.type !== 'usage')).toEqual([
      { type: 'block-start', index: 1, blockType: 'tool-call', id: 't', name: 'n' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"q":1}' },
      { type: 'block-end', index: 1 },
      { type: 'finish', reason: 'content-filter' },
    ])
  })

  it('maps every stop reason', () => {
    expect(
      [
        'end_turn',
        'stop_sequence',
        'tool_use',
        'max_tokens',
        'refusal',
        'model_context_window_exceeded',
        'pause_turn',
        null,
        'something_new',
      ].map(finishReason),
    ).toEqual(['stop', 'stop', 'tool-calls', 'max-tokens', 'content-filter', 'max-tokens', 'stop', 'stop', 'stop'])
  })

  it('posts to /v1/messages with the key as x-api-key and no Authorization header', async () => {
    const adapter = await harness(() => streamReply({ blocks: [{ type: 'text', text: 'hi' }] }))
    await adapter.collect()
    const [request] = adapter.server.requests
    expect(request).toMatchObject({ method: 'POST', path: '/v1/messages' })
    expect(request!.headers['x-api-key']).toBe(TEST_KEY)
    expect(request!.headers.authorization).toBeUndefined()
    expect(request!.headers['anthropic-version']).toBeTruthy()
    expect(request!.body).toMatchObject({ model: MODEL, max_tokens: 1024, stream: true })
    adapter.assertClean()
  })
})
