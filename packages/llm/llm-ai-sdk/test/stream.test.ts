import {
  ContentAssembler,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { Harness, Kind } from './fixture.ts'
import { mount, WIRE_MODEL } from './fixture.ts'
import { anthropicBlock, anthropicStream, chatContent, chatStream, openaiUsage } from './sse.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.finish()
})

async function harness(
  kind: Kind,
  ...args: Parameters<typeof mount> extends [Kind, ...infer Rest] ? Rest : never
): Promise<Harness> {
  const created = await mount(kind, ...args)
  harnesses.push(created)
  return created
}

describe('streaming through @ai-sdk/openai-compatible', () => {
  it('maps reasoning, text and raw tool-call arguments to blocks, then usage and finish', async () => {
    const args = '{"path":"a.ts",  "limit":2}'
    const server = await harness('compat', () => ({
      sse: chatStream(
        WIRE_MODEL.compat,
        { reasoning: 'think', text: 'Hi there', toolCalls: [{ id: 'call_1', name: 'read', arguments: args }] },
        openaiUsage(30, 20, 7),
      ),
    }))
    const chunks = await server.collect()
    const assembler = new ContentAssembler()
    for (const chunk of chunks) assembler.push(chunk)
    expect(assembler.content()).toEqual([
      reasoningBlock('think'),
      textBlock('Hi there'),
      toolCallBlock('call_1', 'read', args),
    ])
    expect(chunks.at(-2)).toEqual({
      type: 'usage',
      usage: { inputTokens: 10, cacheReadTokens: 20, outputTokens: 7, raw: openaiUsage(30, 20, 7) },
    })
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls' })
    server.assertClean()
  })

  it('fails a stream cut before its finish reason with STREAM_INCOMPLETE, and retries it only before output', async () => {
    const cut = await harness('compat', () => ({ sse: chatContent(WIRE_MODEL.compat, { text: 'partial' }) }), {
      maxRetries: 1,
    })
    const error = await cut.failure()
    expect(error.code).toBe('STREAM_INCOMPLETE')
    // Text had reached the caller: no retry.
    expect(cut.server.requests).toHaveLength(1)
  })

  it('retries a stream that ends with no output, then succeeds', async () => {
    const server = await harness(
      'compat',
      (_, index) => (index === 0 ? { sse: [] } : { sse: chatStream(WIRE_MODEL.compat, { text: 'ok' }) }),
      { maxRetries: 1 },
    )
    const chunks = await server.collect()
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(server.server.requests).toHaveLength(2)
  })

  it('replays a turn: reasoning as reasoning_content, tool-call arguments byte for byte, the tool result with its call id', async () => {
    const args = '{"b":1,  "a":2}'
    const server = await harness('compat', () => ({ sse: chatStream(WIRE_MODEL.compat, { text: 'done' }) }))
    await server.collect({
      messages: [
        createUserMessage('go'),
        createAssistantMessage([reasoningBlock('hmm'), textBlock('calling'), toolCallBlock('call_9', 'read', args)], {
          provider: 'ai',
          model: 'main',
        }),
        createToolResultMessage('call_9', 'file body'),
      ],
    })
    const body = server.server.requests[0]!.body
    expect(body).toContain(`"arguments":${JSON.stringify(args)}`)
    expect(server.server.requests[0]!.json.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'calling',
        reasoning_content: 'hmm',
        tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'read', arguments: args } }],
      },
      { role: 'tool', tool_call_id: 'call_9', content: 'file body' },
    ])
  })
})

describe('streaming through @ai-sdk/anthropic', () => {
  it('maps thinking (with its signature), text and tool input to blocks, and usage with cache reads and writes', async () => {
    const startUsage = {
      input_tokens: 5,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
      output_tokens: 1,
    }
    const server = await harness('anthropic', () => ({
      sse: anthropicStream({
        blocks: [
          { type: 'thinking', thinking: 'ponder', signature: 'sig-1' },
          { type: 'text', text: 'Hello' },
          { type: 'tool_use', id: 'toolu_1', name: 'read', json: '{"path":"x"}' },
        ],
        stopReason: 'tool_use',
        startUsage,
      }),
      done: false,
    }))
    const chunks = await server.collect()
    const assembler = new ContentAssembler()
    for (const chunk of chunks) assembler.push(chunk)
    expect(assembler.content()).toEqual([
      reasoningBlock('ponder', '{"anthropic":{"signature":"sig-1"}}'),
      textBlock('Hello'),
      toolCallBlock('toolu_1', 'read', '{"path":"x"}'),
    ])
    const usage = chunks.find((chunk) => chunk.type === 'usage')
    expect(usage).toMatchObject({
      usage: { inputTokens: 5, cacheReadTokens: 100, cacheWriteTokens: 20, outputTokens: 42 },
    })
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls' })
  })

  it('replays the thinking signature from the block signature and places two breakpoints', async () => {
    const server = await harness('anthropic', () => ({
      sse: anthropicStream({ blocks: [{ type: 'text', text: 'ok' }] }),
      done: false,
    }))
    await server.collect({
      system: 'You are terse.',
      messages: [
        createUserMessage('go'),
        createAssistantMessage(
          [
            reasoningBlock('hmm', '{"anthropic":{"signature":"sig-7"}}'),
            toolCallBlock('toolu_2', 'read', '{"path":"y"}'),
          ],
          { provider: 'ai', model: 'main' },
        ),
        createToolResultMessage('toolu_2', 'contents'),
      ],
    })
    const json = server.server.requests[0]!.json
    expect(json.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }])
    expect(json.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'sig-7' },
      { type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: 'y' } },
    ])
    expect(json.messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_2', content: 'contents', cache_control: { type: 'ephemeral' } },
    ])
  })

  it('fails a stream cut mid-block with STREAM_INCOMPLETE', async () => {
    const events = anthropicStream({ blocks: [{ type: 'text', text: 'Hello there' }] })
    const server = await harness(
      'anthropic',
      () => ({
        sse: [...events.slice(0, 3), ...anthropicBlock({ type: 'text', text: 'Hello' }, 0).slice(0, 2)],
        done: false,
      }),
      { maxRetries: 0 },
    )
    expect((await server.failure()).code).toBe('STREAM_INCOMPLETE')
  })
})
