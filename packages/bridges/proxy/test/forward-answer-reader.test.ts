import { describe, expect, it } from 'vitest'
import type { DecidedContent } from '../src/index.ts'
import { AnswerReader } from '../src/index.ts'
import { sse } from './forward-scripted-upstream.ts'

/** Reads `parts` one by one; returns the reading and the content decided after each part. */
function read(api: ConstructorParameters<typeof AnswerReader>[0], streamed: boolean, parts: readonly string[]) {
  const reader = new AnswerReader(api, streamed)
  const decidedAfter: Array<DecidedContent | undefined> = []
  let calls = 0
  reader.onDecided = () => calls++
  for (const part of parts) {
    reader.push(Buffer.from(part))
    decidedAfter.push(reader.decided)
  }
  return { reading: reader.end(), decidedAfter, calls }
}

describe('AnswerReader', () => {
  it('decides text on the first text delta, not on reasoning before it (Anthropic)', () => {
    const { reading, decidedAfter, calls } = read('anthropic-messages', true, [
      sse(
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
        'content_block_start',
      ),
      sse(
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } },
        'content_block_delta',
      ),
      sse({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }, 'content_block_start'),
      sse({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Sum' } }, 'content_block_delta'),
    ])
    expect(decidedAfter).toEqual([undefined, undefined, undefined, 'text'])
    expect(calls).toBe(1)
    expect(reading.content).toBe('text')
  })

  it('decides tool-call on each API’s first tool call', () => {
    expect(
      read('anthropic-messages', true, [
        sse({
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 't', name: 'read', input: {} },
        }),
      ]).decidedAfter,
    ).toEqual(['tool-call'])
    expect(
      read('openai-chat', true, [sse({ choices: [{ delta: { tool_calls: [{ index: 0 }] } }] })]).decidedAfter,
    ).toEqual(['tool-call'])
    expect(
      read('openai-responses', true, [
        sse({ type: 'response.output_item.added', item: { type: 'reasoning' } }),
        sse({ type: 'response.output_item.added', item: { type: 'function_call', name: 'read' } }),
      ]).decidedAfter,
    ).toEqual([undefined, 'tool-call'])
    expect(
      read('gemini', true, [
        `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: 'read' } }] } }] })}\r\n\r\n`,
      ]).reading.content,
    ).toBe('tool-call')
  })

  it('reads a JSON answer only once whole, split anywhere', () => {
    const body = JSON.stringify({
      id: 'chatcmpl-9',
      choices: [{ message: { content: 'Hi' } }],
      usage: { prompt_tokens: 7, completion_tokens: 1 },
    })
    const { reading, decidedAfter } = read('openai-chat', false, [body.slice(0, 13), body.slice(13)])
    expect(decidedAfter).toEqual([undefined, undefined])
    expect(reading).toEqual({
      streamed: false,
      content: 'text',
      responseId: 'chatcmpl-9',
      usage: { inputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 1 },
    })
  })

  it('reads an SSE event split across chunks, and Gemini’s JSON-array stream', () => {
    const event = sse({ type: 'message_delta', usage: { input_tokens: 3, output_tokens: 9 } })
    expect(
      read('anthropic-messages', true, [event.slice(0, 5), event.slice(5, 30), event.slice(30)]).reading.usage,
    ).toEqual({
      inputTokens: 3,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 9,
    })
    const array = JSON.stringify([
      { candidates: [{ content: { parts: [{ text: 'a' }] } }] },
      {
        candidates: [{ content: { parts: [{ text: 'b' }] } }],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 1 },
      },
    ])
    expect(read('gemini', false, [array]).reading).toMatchObject({
      content: 'text',
      usage: { inputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 3 },
    })
  })

  it('says why a malformed answer is unreadable', () => {
    expect(read('openai-chat', false, ['{"id": oops']).reading.unreadable).toMatch(/^the answer is not JSON: /)
    expect(read('openai-chat', false, ['']).reading.unreadable).toBe('the answer body was empty')
    expect(read('openai-chat', true, [sse({ id: 'a' }), 'data: {not json}\n\n']).reading.unreadable).toMatch(
      /^server-sent event 2 is not JSON: /,
    )
    expect(read('openai-chat', true, ['data: [1,2]\n\n']).reading.unreadable).toBe(
      'answer event 1 is not a JSON object',
    )
    const cut = new AnswerReader('openai-responses', true)
    cut.push(Buffer.from(sse({ type: 'response.created', response: { id: 'resp_7' } })))
    expect(cut.end('the answer was cut: reset')).toMatchObject({
      responseId: 'resp_7',
      unreadable: 'the answer was cut: reset',
    })
  })

  it('reads nothing of a route no dialect claims', () => {
    expect(read(undefined, false, ['{"data":[]}']).reading).toEqual({ streamed: false, content: 'unknown' })
  })
})
