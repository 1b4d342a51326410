import type { StreamChunk } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { StreamMapper } from '../src/map-stream.ts'
import type { AdapterHarness, HarnessConfig } from './fixture.ts'
import { collect, expectLlmError, MODEL, mountAdapter, request } from './fixture.ts'
import { chunk, contentChunks, openaiStream, openaiUsage, vllmStream } from './provider-streams.ts'
import type { Reply } from '@warmfold/test-utils'

/** A tool-call fragment that repeats the id and the full name, as some servers do. */
function fragment(index: number, args: string): object {
  return chunk(MODEL, {
    tool_calls: [
      { index, id: `call_${index}`, type: 'function', function: { name: index ? 'write' : 'read', arguments: args } },
    ],
  })
}

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) {
    harness.assertClean()
    await harness.dispose()
  }
})

async function replying(reply: Reply, config: HarnessConfig = {}): Promise<AdapterHarness> {
  const harness = await mountAdapter(() => reply, config)
  harnesses.push(harness)
  return harness
}

describe('stream mapping', () => {
  it('maps reasoning, text and tool calls to blocks indexed by first appearance, ends them, then usage and finish', async () => {
    const harness = await replying({
      sse: openaiStream(
        MODEL,
        {
          reasoning: 'Let me look.',
          text: 'Reading two files.',
          toolCalls: [
            { id: 'call_a', name: 'read', arguments: '{"path": "a.ts"}' },
            { id: 'call_b', name: 'list', arguments: '{}' },
          ],
        },
        openaiUsage(10, 0, 5, 2),
      ),
    })
    const chunks = await collect(harness, request(harness))
    const starts = chunks.filter((part) => part.type === 'block-start')
    expect(starts).toEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'block-start', index: 2, blockType: 'tool-call', id: 'call_a', name: 'read' },
      { type: 'block-start', index: 3, blockType: 'tool-call', id: 'call_b', name: 'list' },
    ])
    const types = chunks.map((part) => part.type)
    expect(types.slice(-6)).toEqual(['block-end', 'block-end', 'block-end', 'block-end', 'usage', 'finish'])
    expect(chunks.filter((part) => part.type === 'block-end').map((part) => (part as { index: number }).index)).toEqual(
      [0, 1, 2, 3],
    )
    for (const [position, part] of chunks.entries()) {
      if (part.type === 'block-start' || !('index' in part)) continue
      const start = chunks.findIndex((other) => other.type === 'block-start' && other.index === part.index)
      expect(start, `${part.type} for block ${part.index} comes after its block-start`).toBeGreaterThanOrEqual(0)
      expect(position).toBeGreaterThan(start)
    }
    const result = await harness.ctx.llm.generate(request(harness))
    expect(result.content).toEqual([
      { type: 'reasoning', text: 'Let me look.' },
      { type: 'text', text: 'Reading two files.' },
      { type: 'tool-call', id: 'call_a', name: 'read', arguments: '{"path": "a.ts"}' },
      { type: 'tool-call', id: 'call_b', name: 'list', arguments: '{}' },
    ])
    expect(result.finishReason).toBe('tool-calls')
  })

  it('reads reasoning from `reasoning` too (newer vLLM)', async () => {
    const harness = await replying(
      { sse: vllmStream(MODEL, { reasoning: 'Thinking in vLLM.', text: 'Done.' }, 10, 3) },
      { dialect: 'vllm' },
    )
    const result = await harness.ctx.llm.generate(request(harness))
    expect(result.content).toEqual([
      { type: 'reasoning', text: 'Thinking in vLLM.' },
      { type: 'text', text: 'Done.' },
    ])
  })

  it('keeps interleaved tool-call fragments apart by index, and sends a repeated id and name once', async () => {
    const harness = await replying({
      sse: [
        fragment(0, '{"pa'),
        fragment(1, '{"co'),
        fragment(0, 'th": 1}'),
        fragment(1, 'ntent": 2}'),
        chunk(MODEL, {}, 'tool_calls'),
      ],
    })
    const chunks = await collect(harness, request(harness))
    expect(
      chunks.filter((part) => part.type === 'tool-call-delta').every((part) => !('name' in part) && !('id' in part)),
    ).toBe(true)
    const result = await harness.ctx.llm.generate(request(harness))
    expect(result.content).toEqual([
      { type: 'tool-call', id: 'call_0', name: 'read', arguments: '{"path": 1}' },
      { type: 'tool-call', id: 'call_1', name: 'write', arguments: '{"content": 2}' },
    ])
  })

  it('maps every finish_reason', () => {
    const cases: Array<[string, StreamChunk]> = [
      ['stop', { type: 'finish', reason: 'stop' }],
      ['length', { type: 'finish', reason: 'max-tokens' }],
      ['tool_calls', { type: 'finish', reason: 'tool-calls' }],
      ['function_call', { type: 'finish', reason: 'tool-calls' }],
      ['content_filter', { type: 'finish', reason: 'content-filter' }],
      ['eos_token', { type: 'finish', reason: 'stop' }],
    ]
    for (const [reason, expected] of cases) {
      const mapper = new StreamMapper('p', 'generic')
      mapper.push(chunk(MODEL, { content: 'x' }, reason) as never)
      expect(mapper.end().at(-1), reason).toEqual(expected)
    }
  })

  it("DeepSeek's insufficient_system_resource is a SERVER error, not a silent stop", async () => {
    const harness = await replying(
      { sse: [chunk(MODEL, { content: 'half an ans' }), chunk(MODEL, {}, 'insufficient_system_resource')] },
      { dialect: 'deepseek' },
    )
    const error = await expectLlmError(() => collect(harness, request(harness)), 'SERVER')
    expect(error.message).toContain('insufficient_system_resource')
  })

  it("a chunk that is not JSON → INVALID_RESPONSE (the SDK's log line becomes a cordis warning)", async () => {
    const harness = await replying({ sse: [chunk(MODEL, { content: 'ok' }), '{not json'] })
    await expectLlmError(() => collect(harness, request(harness)), 'INVALID_RESPONSE')
    expect(harness.warnings.some((warning) => warning.includes('Could not parse message into JSON'))).toBe(true)
    harness.warnings.splice(0)
  })
})

describe('a stream that ends without finish_reason → STREAM_INCOMPLETE', () => {
  it('after [DONE]', async () => {
    const harness = await replying({ sse: contentChunks(MODEL, { text: 'I was cut off' }) }, { provider: 'cut' })
    const error = await expectLlmError(() => collect(harness, request(harness)), 'STREAM_INCOMPLETE')
    expect(error.provider).toBe('cut')
    expect(error.message).toContain('cut: the response stream ended after')
    expect(error.message).toContain('without a finish_reason')
  })

  it('when the connection closes without [DONE]', async () => {
    const harness = await replying({ sse: contentChunks(MODEL, { text: 'I was cut off' }), done: false })
    await expectLlmError(() => collect(harness, request(harness)), 'STREAM_INCOMPLETE')
  })

  it('an empty stream', async () => {
    const harness = await replying({ sse: [] })
    const error = await expectLlmError(() => harness.ctx.llm.generate(request(harness)), 'STREAM_INCOMPLETE')
    expect(error.message).toContain('after 0 chunk(s)')
  })

  it('usage alone is not a finish', async () => {
    const harness = await replying({
      sse: [chunk(MODEL, { content: 'x' }), { choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }],
    })
    await expectLlmError(() => collect(harness, request(harness)), 'STREAM_INCOMPLETE')
  })
})
