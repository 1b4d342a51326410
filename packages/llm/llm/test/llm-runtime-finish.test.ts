import type { TestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GenerateOptions, LlmFinish, StreamChunk } from '../src/index.ts'
import { LlmError } from '../src/index.ts'
import type { ScriptedReply } from '../src/testing/index.ts'
import { ScriptedAdapter } from '../src/testing/index.ts'
import { expectLlmError, finish, mountRuntime, request } from './fixture.ts'

describe('llm/finish: how each call that reached the adapter ended', () => {
  let test: TestContext
  let replies: ScriptedReply[]
  let finished: Array<{ options: GenerateOptions; outcome: LlmFinish }>
  let streamed: GenerateOptions[]

  beforeEach(async () => {
    test = await mountRuntime()
    replies = []
    finished = []
    streamed = []
    test.ctx.llm.registerAdapter(
      'p',
      new ScriptedAdapter({ responses: (_request, index) => replies[index] ?? { content: 'ok' } }),
    )
    test.ctx.on('llm/stream', (options) => void streamed.push(options))
    test.ctx.on('llm/finish', (options, outcome) => void finished.push({ options, outcome }))
  })

  afterEach(() => finish(test))

  it('reports the finish reason and the last usage, with the very options llm/stream saw, before the caller has the result', async () => {
    replies = [
      {
        chunks: [
          { type: 'usage', usage: { inputTokens: 1 } },
          { type: 'text-delta', index: 0, delta: 'hi' },
          { type: 'usage', usage: { inputTokens: 7, cacheReadTokens: 93, outputTokens: 2 } },
          { type: 'finish', reason: 'stop' },
        ],
      },
    ]
    let seenBeforeResult = 0
    const result = await test.ctx.llm.generate(request('p', 'scripted-model')).then((value) => {
      seenBeforeResult = finished.length
      return value
    })
    expect(result.finishReason).toBe('stop')
    expect(seenBeforeResult).toBe(1)
    expect(finished).toHaveLength(1)
    expect(finished[0]!.options).toBe(streamed[0])
    expect(finished[0]!.outcome).toEqual({
      usage: { inputTokens: 7, cacheReadTokens: 93, outputTokens: 2 },
      finishReason: 'stop',
    })
  })

  it('reports a stream without usage with usage undefined', async () => {
    await test.ctx.llm.generate(request('p', 'scripted-model'))
    expect(finished.map((entry) => entry.outcome)).toEqual([{ usage: undefined, finishReason: 'stop' }])
  })

  it('reports an adapter error as error, with what was thrown, and the caller still gets that error', async () => {
    const thrown = new LlmError('SERVER', 'upstream 502')
    replies = [{ error: thrown }]
    await expectLlmError(() => test.ctx.llm.generate(request('p', 'scripted-model')), 'SERVER')
    expect(finished).toHaveLength(1)
    expect(finished[0]!.outcome.finishReason).toBe('error')
    expect(finished[0]!.outcome.error).toBe(thrown)
  })

  it('reports a stream that ends without a finish chunk as error', async () => {
    replies = [{ chunks: [{ type: 'usage', usage: { inputTokens: 3 } }] }]
    await expectLlmError(() => test.ctx.llm.generate(request('p', 'scripted-model')), 'STREAM_INCOMPLETE')
    expect(finished.map((entry) => entry.outcome)).toEqual([{ usage: { inputTokens: 3 }, finishReason: 'error' }])
  })

  it('reports a call aborted mid-stream as aborted', async () => {
    const controller = new AbortController()
    async function* chunks(): AsyncGenerator<StreamChunk> {
      yield { type: 'text-delta', index: 0, delta: 'par' }
      controller.abort(new Error('user pressed stop'))
      yield { type: 'text-delta', index: 0, delta: 'tial' }
    }
    replies = [{ chunks: chunks() }]
    await expectLlmError(
      () => test.ctx.llm.generate(request('p', 'scripted-model', { signal: controller.signal })),
      'ABORTED',
    )
    expect(finished.map((entry) => entry.outcome.finishReason)).toEqual(['aborted'])
  })

  it('reports a consumer that stops reading before the finish chunk as aborted, and one that stops after it with its reason', async () => {
    for await (const chunk of test.ctx.llm.stream(request('p', 'scripted-model')))
      if (chunk.type === 'text-delta') break
    for await (const chunk of test.ctx.llm.stream(request('p', 'scripted-model'))) if (chunk.type === 'finish') break
    expect(finished.map((entry) => entry.outcome.finishReason)).toEqual(['aborted', 'stop'])
  })

  it('does not fire for a call stopped before the adapter (a failing llm/stream hook)', async () => {
    test.ctx.on('llm/stream', () => {
      throw new Error('observer refused')
    })
    await expect(test.ctx.llm.generate(request('p', 'scripted-model'))).rejects.toThrow('observer refused')
    expect(finished).toEqual([])
  })

  it("reports a listener that throws as internal/error and leaves the call's result alone", async () => {
    test.ctx.on('llm/finish', () => {
      throw new Error('broken telemetry')
    })
    const result = await test.ctx.llm.generate(request('p', 'scripted-model'))
    expect(result.finishReason).toBe('stop')
    expect(test.errors.map(String)).toEqual(['Error: broken telemetry'])
    test.errors.length = 0
  })
})
