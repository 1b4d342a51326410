import type { TestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GenerateOptions, StreamChunk, TokenUsage } from '../src/index.ts'
import { imageBlock, LlmError, reasoningBlock, textBlock, textOf, toolCallBlock } from '../src/index.ts'
import type { ScriptedResponses } from '../src/testing/index.ts'
import { ScriptedAdapter } from '../src/testing/index.ts'
import { chunksFor } from '../src/testing/scripted-adapter.ts'
import { expectLlmError, finish, mountRuntime, request } from './fixture.ts'

const MODEL = 'scripted-model'

describe('ScriptedAdapter', () => {
  let test: TestContext

  beforeEach(async () => {
    test = await mountRuntime()
  })

  afterEach(() => finish(test))

  function register(responses: ScriptedResponses): ScriptedAdapter {
    const adapter = new ScriptedAdapter({ responses })
    test.ctx.llm.registerAdapter('p', adapter)
    return adapter
  }

  async function replyText(options: GenerateOptions = request('p', MODEL)): Promise<string> {
    return textOf((await test.ctx.llm.generate(options)).content)
  }

  it('repeats a single reply for every call and records each request', async () => {
    const adapter = register({ content: 'same' })
    expect([await replyText(), await replyText(), await replyText()]).toEqual(['same', 'same', 'same'])
    expect(adapter.requests).toHaveLength(3)
  })

  it('gives one reply per call from an array and names the call index past the end', async () => {
    register([{ content: 'one' }, { content: 'two' }])
    expect(await replyText()).toBe('one')
    expect(await replyText()).toBe('two')
    await expect(test.ctx.llm.generate(request('p', MODEL))).rejects.toThrow(
      'no reply scripted for call 2 (only 2 given)',
    )
  })

  it('calls a function reply with the request it received and the call index', async () => {
    const seen: Array<[GenerateOptions, number]> = []
    const adapter = register((options, callIndex) => {
      seen.push([options, callIndex])
      return { content: `${options.system} #${callIndex}` }
    })
    expect(await replyText(request('p', MODEL, { system: 'a' }))).toBe('a #0')
    expect(await replyText(request('p', MODEL, { system: 'b' }))).toBe('b #1')
    expect(seen.map(([, callIndex]) => callIndex)).toEqual([0, 1])
    expect(seen[0]?.[0]).toBe(adapter.requests[0])
    expect(seen[1]?.[0]).toBe(adapter.requests[1])
  })

  it('throws an error reply as is, after recording the request', async () => {
    const error = new LlmError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 2 })
    const adapter = register([{ error }, { content: 'recovered' }])
    await expect(test.ctx.llm.generate(request('p', MODEL))).rejects.toBe(error)
    expect(await replyText()).toBe('recovered')
    expect(adapter.requests).toHaveLength(2)
  })

  it('streams content replies through the real assembler so they come back unchanged', async () => {
    const content = [
      reasoningBlock('think', 'sig'),
      textBlock('odd', 'sig-text'),
      toolCallBlock('call_1', 'f', '{"b":1,  "a":2}', 'sig-call'),
      textBlock('plain'),
    ]
    register({ content })
    const result = await test.ctx.llm.generate(request('p', MODEL))
    expect(result.content).toEqual(content)
    expect(result.finishReason).toBe('tool-calls')
  })

  it('passes token usage through untouched, leaving absent fields undefined', async () => {
    const usage: TokenUsage = { outputTokens: 5, raw: { completion_tokens: 5 } }
    register({ content: 'x', usage, finishReason: 'max-tokens' })
    const result = await test.ctx.llm.generate(request('p', MODEL))
    expect(result.usage).toStrictEqual({ outputTokens: 5, raw: { completion_tokens: 5 } })
    expect(result.usage?.inputTokens).toBeUndefined()
    expect(result.usage?.cacheReadTokens).toBeUndefined()
    expect(result.usage?.cacheWriteTokens).toBeUndefined()
    expect(result.finishReason).toBe('max-tokens')
  })

  it('stops with ABORTED when the signal fires mid-stream', async () => {
    const controller = new AbortController()
    async function* chunks(): AsyncGenerator<StreamChunk> {
      yield { type: 'text-delta', index: 0, delta: 'partial' }
      controller.abort()
      yield { type: 'text-delta', index: 0, delta: ' more' }
      yield { type: 'finish', reason: 'stop' }
    }
    register({ chunks: chunks() })
    const received: StreamChunk[] = []
    await expectLlmError(async () => {
      for await (const chunk of test.ctx.llm.stream(request('p', MODEL, { signal: controller.signal })))
        received.push(chunk)
    }, 'ABORTED')
    expect(received).toEqual([{ type: 'text-delta', index: 0, delta: 'partial' }])
  })

  it('knows only scripted-model by default', async () => {
    register({ content: 'x' })
    expect(await test.ctx.llm.resolveModelInfo('p', MODEL)).toEqual({ contextWindow: 128000 })
    const error = await expectLlmError(() => test.ctx.llm.resolveModelInfo('p', 'other'), 'UNKNOWN_MODEL')
    expect(error.message).toContain('known models: scripted-model')
  })
})

describe('ScriptedAdapter models', () => {
  let test: TestContext

  beforeEach(async () => {
    test = await mountRuntime()
  })

  afterEach(() => finish(test))

  it("takes the HTTP adapters' flat model shape, so a host's model table works unchanged", async () => {
    // The same entry @warmfold/llm-openai-compatible and @warmfold/llm-anthropic take in `models`.
    const flat = {
      contextWindow: 131072,
      defaultMaxTokens: 8192,
      efforts: ['off', 'high', 'max'],
      defaultEffort: 'high',
    }
    test.ctx.llm.registerAdapter(
      'p',
      new ScriptedAdapter({
        models: { 'deepseek-v4-flash': flat, plain: { contextWindow: 4000 } },
        responses: { content: 'ok' },
      }),
    )
    expect(await test.ctx.llm.resolveModelInfo('p', 'deepseek-v4-flash')).toEqual({
      contextWindow: 131072,
      defaultMaxTokens: 8192,
      reasoning: { efforts: ['off', 'high', 'max'], defaultEffort: 'high' },
    })
    expect(await test.ctx.llm.resolveModelInfo('p', 'plain')).toEqual({ contextWindow: 4000 })
    // The runtime applies the flat entry's defaults and checks efforts against it.
    const prepared = await test.ctx.llm.prepare(request('p', 'deepseek-v4-flash'))
    expect(prepared).toMatchObject({ reasoningEffort: 'high', maxTokens: 8192 })
    await expectLlmError(
      () => test.ctx.llm.prepare(request('p', 'deepseek-v4-flash', { reasoningEffort: 'low' })),
      'UNSUPPORTED_REASONING_EFFORT',
    )
  })

  it('keeps the ModelInfo shape, and reads empty efforts as no reasoning controls', async () => {
    const info = { contextWindow: 8000, reasoning: { efforts: ['low', 'high'], defaultEffort: 'high' } }
    test.ctx.llm.registerAdapter(
      'p',
      new ScriptedAdapter({
        models: { info, none: { contextWindow: 8000, efforts: [] } },
        responses: { content: 'ok' },
      }),
    )
    expect(await test.ctx.llm.resolveModelInfo('p', 'info')).toEqual(info)
    expect(await test.ctx.llm.resolveModelInfo('p', 'none')).toEqual({ contextWindow: 8000 })
  })

  it('rejects an entry that mixes both shapes or names a default effort it does not accept, naming the model', () => {
    const mixed = { contextWindow: 8000, reasoning: { efforts: ['high'] }, efforts: ['high'] }
    expect(() => new ScriptedAdapter({ models: { m: mixed }, responses: { content: 'ok' } })).toThrow(
      'ScriptedAdapter: models["m"] sets both reasoning and efforts/defaultEffort',
    )
    expect(
      () =>
        new ScriptedAdapter({
          models: { m: { contextWindow: 8000, efforts: ['low'], defaultEffort: 'max' } },
          responses: { content: 'ok' },
        }),
    ).toThrow('ScriptedAdapter: models["m"].defaultEffort "max" must be one of models["m"].efforts (low)')
    expect(
      () =>
        new ScriptedAdapter({
          models: { m: { contextWindow: 8000, defaultEffort: 'max' } },
          responses: { content: 'ok' },
        }),
    ).toThrow('(none given)')
  })
})

describe('chunksFor', () => {
  it('opens, fills in two deltas and closes each block, then adds usage and finish', () => {
    expect(chunksFor({ content: 'abc', usage: { outputTokens: 1 } })).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, delta: 'ab' },
      { type: 'text-delta', index: 0, delta: 'c' },
      { type: 'block-end', index: 0 },
      { type: 'usage', usage: { outputTokens: 1 } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('refuses blocks a model cannot produce', () => {
    expect(() => chunksFor({ content: [imageBlock('image/png', 'aGk=')] })).toThrow('cannot contain a image block')
  })
})
