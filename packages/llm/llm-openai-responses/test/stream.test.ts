import { ContentAssembler, createAssistantMessage } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { decodeReasoningSignature } from '../src/reasoning-signature.ts'
import { encodeMessagePhase } from '../src/message-phase.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { mountAdapter, request } from './adapter-fixture.ts'
import type { ScriptItem } from './sse-script.ts'
import { itemEvents, openingEvents, replyEvents, streamReply } from './sse-script.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

async function harness(...args: Parameters<typeof mountAdapter>): Promise<AdapterHarness> {
  const created = await mountAdapter(...args)
  harnesses.push(created)
  return created
}

const REASONING: ScriptItem = {
  type: 'reasoning',
  id: 'rs_abc',
  summary: ['**Plan**\n\nRead the file.', 'Then answer.'],
  encrypted: 'gAAAA-encrypted-1',
}
const CALL: ScriptItem = {
  type: 'function_call',
  callId: 'call_1',
  name: 'read',
  arguments: '{"path": "a.ts",  "limit":2}',
}

describe('stream mapping', () => {
  it('maps a reasoning item, a message and a function call to blocks indexed by output_index, with usage and finish', async () => {
    const adapter = await harness(() =>
      streamReply({ items: [REASONING, { type: 'message', text: 'Reading it.', phase: 'commentary' }, CALL] }),
    )
    const chunks = await adapter.collect()
    const assembler = new ContentAssembler()
    for (const chunk of chunks) assembler.push(chunk)
    const blocks = assembler.content()
    expect(blocks).toEqual([
      { type: 'reasoning', text: '**Plan**\n\nRead the file.\n\nThen answer.', signature: expect.any(String) },
      { type: 'text', text: 'Reading it.', signature: encodeMessagePhase('commentary') },
      { type: 'tool-call', id: 'call_1', name: 'read', arguments: '{"path": "a.ts",  "limit":2}' },
    ])
    // The signature holds what a stateless replay needs, exactly as received.
    expect(decodeReasoningSignature(blocks[0]?.type === 'reasoning' ? blocks[0].signature : undefined)).toEqual({
      id: 'rs_abc',
      encrypted_content: 'gAAAA-encrypted-1',
      summary: [
        { type: 'summary_text', text: '**Plan**\n\nRead the file.' },
        { type: 'summary_text', text: 'Then answer.' },
      ],
    })
    expect(chunks.at(-2)).toEqual({
      type: 'usage',
      usage: expect.objectContaining({ inputTokens: 10, cacheReadTokens: 0, outputTokens: 42 }),
    })
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls' })
  })

  it('replays the streamed items on the next request in their original order, without item ids', async () => {
    const adapter = await harness((_request, index) =>
      streamReply({ items: index === 0 ? [REASONING, CALL] : [{ type: 'message', text: 'Done.' }] }),
    )
    const first = await adapter.collect()
    const assembler = new ContentAssembler()
    for (const chunk of first) assembler.push(chunk)
    const assistant = createAssistantMessage(assembler.content(), { provider: 'openai', model: 'gpt-test' })
    const base = request()
    await adapter.collect({ messages: [...base.messages, assistant] })
    const input = adapter.server.requests[1]!.json.input
    expect(input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] },
      {
        type: 'reasoning',
        summary: [
          { type: 'summary_text', text: '**Plan**\n\nRead the file.' },
          { type: 'summary_text', text: 'Then answer.' },
        ],
        encrypted_content: 'gAAAA-encrypted-1',
      },
      { type: 'function_call', call_id: 'call_1', name: 'read', arguments: '{"path": "a.ts",  "limit":2}' },
    ])
    expect(adapter.server.requests[1]!.body).not.toMatch(/"id":"(rs|fc|msg)_/)
  })

  it('skips item types it does not map, takes content that arrives only in the done item, and ends open blocks at completion', async () => {
    let sequence = 0
    const next = () => sequence++
    const adapter = await harness(() => ({
      done: false,
      sse: [
        ...openingEvents(next),
        ...itemEvents({ type: 'web_search_call', id: 'ws_1' }, 0, next),
        // A message whose text arrives only in output_item.done.
        ...itemEvents({ type: 'message', text: 'whole' }, 1, next).filter(
          (event) => !JSON.stringify(event).includes('output_text.delta'),
        ),
        ...replyEvents({ items: [] }).slice(-1),
      ],
    }))
    const chunks = await adapter.collect()
    expect(chunks).toEqual([
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, delta: 'whole' },
      { type: 'block-end', index: 1 },
      { type: 'usage', usage: expect.any(Object) },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('maps response.incomplete to max-tokens or content-filter, with its usage', async () => {
    const cut = await harness(() =>
      streamReply({ items: [{ type: 'message', text: 'partial' }], incomplete: 'max_output_tokens' }),
    )
    expect((await cut.collect()).slice(-2)).toEqual([
      { type: 'usage', usage: expect.objectContaining({ outputTokens: 42 }) },
      { type: 'finish', reason: 'max-tokens' },
    ])
    const filtered = await harness(() => streamReply({ items: [], incomplete: 'content_filter' }))
    expect((await filtered.collect()).at(-1)).toEqual({ type: 'finish', reason: 'content-filter' })
  })

  it('a stream cut before response.completed fails with STREAM_INCOMPLETE and is not retried after output', async () => {
    const adapter = await harness(
      () => ({ done: false, sse: replyEvents({ items: [{ type: 'message', text: 'half way' }] }).slice(0, -2) }),
      { maxRetries: 2 },
    )
    const error = await adapter.failure()
    expect(error.code).toBe('STREAM_INCOMPLETE')
    expect(error.message).toMatch(/openai\/gpt-test ended after \d+ events without response\.completed/)
    expect(adapter.server.requests).toHaveLength(1)
  })

  it('a stream cut before any item is retried, and a dropped connection too', async () => {
    const adapter = await harness(
      (_request, index) =>
        index === 0
          ? { done: false, sse: replyEvents({ items: [] }).slice(0, 2) }
          : index === 1
            ? { destroy: true }
            : streamReply({ items: [{ type: 'message', text: 'ok' }] }),
      {
        maxRetries: 2,
      },
    )
    expect((await adapter.collect()).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(adapter.server.requests).toHaveLength(3)
  })
})
