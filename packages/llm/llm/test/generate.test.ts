import type { TestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { StreamChunk, TokenUsage } from '../src/index.ts'
import { reasoningBlock, textBlock, toolCallBlock } from '../src/index.ts'
import { ScriptedAdapter } from '../src/testing/index.ts'
import { expectLlmError, finish, mountRuntime, request } from './fixture.ts'

const MODEL = 'scripted-model'

describe('ctx.llm.generate', () => {
  let test: TestContext

  beforeEach(async () => {
    test = await mountRuntime()
  })

  afterEach(() => finish(test))

  function replyWith(chunks: readonly StreamChunk[]): ScriptedAdapter {
    const adapter = new ScriptedAdapter({ responses: { chunks } })
    test.ctx.llm.registerAdapter('p', adapter)
    return adapter
  }

  it('assembles interleaved reasoning, text and tool-call deltas into blocks in index order', async () => {
    const usage: TokenUsage = {
      inputTokens: 12,
      cacheReadTokens: 300,
      outputTokens: 40,
      reasoningTokens: 9,
      raw: { prompt_tokens: 312 },
    }
    replyWith([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'reasoning-delta', index: 0, delta: 'The file ' },
      { type: 'block-start', index: 2, blockType: 'tool-call', id: 'call_1', name: 'read' },
      { type: 'text-delta', index: 1, delta: 'Reading ' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"path":' },
      { type: 'reasoning-delta', index: 0, delta: 'matters.' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '  "a.ts"}' },
      { type: 'text-delta', index: 1, delta: 'it now.' },
      { type: 'block-end', index: 0, signature: 'sig-0' },
      { type: 'block-end', index: 2, signature: 'sig-2' },
      { type: 'block-end', index: 1, signature: 'sig-1' },
      { type: 'usage', usage },
      { type: 'finish', reason: 'tool-calls' },
    ])
    const result = await test.ctx.llm.generate(request('p', MODEL))
    expect(result.content).toEqual([
      reasoningBlock('The file matters.', 'sig-0'),
      textBlock('Reading it now.', 'sig-1'),
      toolCallBlock('call_1', 'read', '{"path":  "a.ts"}', 'sig-2'),
    ])
    expect(result.usage).toBe(usage)
    expect(result.finishReason).toBe('tool-calls')
  })

  it("orders blocks by index, not by arrival, and takes a tool call's id and name from its deltas", async () => {
    replyWith([
      { type: 'tool-call-delta', index: 1, id: 'call_9', name: 'wr', argumentsDelta: '{"a"' },
      { type: 'text-delta', index: 0, delta: 'first' },
      { type: 'tool-call-delta', index: 1, name: 'ite', argumentsDelta: ':1}' },
      { type: 'usage', usage: { outputTokens: 1 } },
      { type: 'usage', usage: { outputTokens: 7 } },
      { type: 'finish', reason: 'tool-calls' },
    ])
    const result = await test.ctx.llm.generate(request('p', MODEL))
    expect(result.content).toEqual([textBlock('first'), toolCallBlock('call_9', 'write', '{"a":1}')])
    expect(result.usage).toEqual({ outputTokens: 7 })
  })

  it('leaves usage undefined when the stream reports none', async () => {
    replyWith([
      { type: 'text-delta', index: 0, delta: 'x' },
      { type: 'finish', reason: 'stop' },
    ])
    const result = await test.ctx.llm.generate(request('p', MODEL))
    expect(result.usage).toBeUndefined()
    expect(result.finishReason).toBe('stop')
  })

  it('rejects a stream without a finish chunk as STREAM_INCOMPLETE', async () => {
    replyWith([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, delta: 'half an ans' },
    ])
    await expectLlmError(() => test.ctx.llm.generate(request('p', MODEL)), 'STREAM_INCOMPLETE')
  })

  it("rejects a delta that contradicts its block's type as INVALID_RESPONSE", async () => {
    replyWith([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'reasoning-delta', index: 0, delta: 'x' },
      { type: 'finish', reason: 'stop' },
    ])
    const error = await expectLlmError(() => test.ctx.llm.generate(request('p', MODEL)), 'INVALID_RESPONSE')
    expect(error.message).toContain('block 0 started as text but received a reasoning chunk')
  })

  it('rejects a block-end for a block that never started as INVALID_RESPONSE', async () => {
    replyWith([
      { type: 'block-end', index: 3 },
      { type: 'finish', reason: 'stop' },
    ])
    const error = await expectLlmError(() => test.ctx.llm.generate(request('p', MODEL)), 'INVALID_RESPONSE')
    expect(error.message).toContain('block 3')
  })

  it('rejects a tool call without an id as INVALID_RESPONSE', async () => {
    replyWith([
      { type: 'tool-call-delta', index: 0, name: 'read', argumentsDelta: '{}' },
      { type: 'finish', reason: 'tool-calls' },
    ])
    const error = await expectLlmError(() => test.ctx.llm.generate(request('p', MODEL)), 'INVALID_RESPONSE')
    expect(error.message).toContain('tool call at block 0 has no id')
  })

  it('rejects an already-aborted call with ABORTED before observers or the adapter see it', async () => {
    const adapter = replyWith([{ type: 'finish', reason: 'stop' }])
    let observed = 0
    test.ctx.on('llm/stream', () => {
      observed++
    })
    const controller = new AbortController()
    const reason = new Error('user pressed stop')
    controller.abort(reason)
    const error = await expectLlmError(
      () => test.ctx.llm.generate(request('p', MODEL, { signal: controller.signal, purpose: 'compaction' })),
      'ABORTED',
    )
    expect(error.message).toContain('compaction call to p/scripted-model')
    expect(error.cause).toBe(reason)
    expect(error.retryable).toBe(false)
    expect(observed).toBe(0)
    expect(adapter.requests).toHaveLength(0)
  })

  it('rejects with ABORTED when an observer aborts the call before it is sent', async () => {
    const adapter = replyWith([{ type: 'finish', reason: 'stop' }])
    const controller = new AbortController()
    test.ctx.on('llm/stream', () => {
      controller.abort()
    })
    await expectLlmError(() => test.ctx.llm.generate(request('p', MODEL, { signal: controller.signal })), 'ABORTED')
    expect(adapter.requests).toHaveLength(0)
  })
})
