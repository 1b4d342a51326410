import type { TestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GenerateOptions, ModelInfo } from '../src/index.ts'
import { canonicalJson } from '../src/index.ts'
import { ScriptedAdapter } from '../src/testing/index.ts'
import { expectLlmError, finish, mountRuntime, request, unfrozenPaths } from './fixture.ts'

const models: Record<string, ModelInfo> = {
  reasoner: {
    contextWindow: 128000,
    defaultMaxTokens: 4096,
    reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
  },
  plain: { contextWindow: 8000 },
}

function withoutSignal(options: GenerateOptions): Omit<GenerateOptions, 'signal'> {
  const { signal: _signal, ...rest } = options
  return rest
}

describe('LlmRuntime request preparation', () => {
  let test: TestContext
  let adapter: ScriptedAdapter

  beforeEach(async () => {
    test = await mountRuntime()
    adapter = new ScriptedAdapter({ models, responses: { content: 'ok' } })
    test.ctx.llm.registerAdapter('p', adapter)
  })

  afterEach(() => finish(test))

  it("materializes the model's default effort and maxTokens when the request omits them", async () => {
    await test.ctx.llm.generate(request('p', 'reasoner'))
    expect(adapter.requests[0]?.reasoningEffort).toBe('high')
    expect(adapter.requests[0]?.maxTokens).toBe(4096)
  })

  it('keeps an explicit effort and maxTokens', async () => {
    await test.ctx.llm.generate(request('p', 'reasoner', { reasoningEffort: 'low', maxTokens: 100 }))
    expect(adapter.requests[0]?.reasoningEffort).toBe('low')
    expect(adapter.requests[0]?.maxTokens).toBe(100)
  })

  it('adds nothing for a model without defaults', async () => {
    await test.ctx.llm.generate(request('p', 'plain'))
    expect('reasoningEffort' in adapter.requests[0]!).toBe(false)
    expect('maxTokens' in adapter.requests[0]!).toBe(false)
  })

  it("leaves the caller's options and messages array untouched", async () => {
    const options = request('p', 'reasoner', { stop: ['END'] })
    const before = canonicalJson(options)
    await test.ctx.llm.generate(options)
    expect(canonicalJson(options)).toBe(before)
    expect(Object.isFrozen(options)).toBe(false)
    expect(Object.isFrozen(options.messages)).toBe(false)
  })

  it('hands the adapter a request frozen at every depth, but keeps the signal live and identical', async () => {
    const controller = new AbortController()
    await test.ctx.llm.generate(
      request('p', 'reasoner', {
        signal: controller.signal,
        tools: [{ name: 't', description: 'd', parameters: { type: 'object' } }],
      }),
    )
    const received = adapter.requests[0]!
    expect(received.signal).toBe(controller.signal)
    expect(Object.isFrozen(received)).toBe(true)
    for (const [key, value] of Object.entries(received)) {
      if (key !== 'signal') expect(unfrozenPaths(value), key).toEqual([])
    }
    expect(Object.isFrozen(controller.signal)).toBe(false)
  })

  it('lets an llm/stream observer see exactly what the adapter receives, before the adapter is called', async () => {
    const observed: GenerateOptions[] = []
    const adapterCallsSeenByObserver: number[] = []
    test.ctx.on('llm/stream', async (options) => {
      // An async observer is awaited before the call proceeds.
      await Promise.resolve()
      adapterCallsSeenByObserver.push(adapter.requests.length)
      observed.push(options)
    })
    const controller = new AbortController()
    await test.ctx.llm.generate(
      request('p', 'reasoner', {
        system: 'be brief',
        temperature: 0,
        signal: controller.signal,
        purpose: 'compaction',
      }),
    )

    expect(adapterCallsSeenByObserver).toEqual([0])
    expect(adapter.requests).toHaveLength(1)
    const received = adapter.requests[0]!
    expect(observed[0]).toBe(received)
    expect(canonicalJson(withoutSignal(observed[0]!))).toBe(canonicalJson(withoutSignal(received)))
    expect(observed[0]!.reasoningEffort).toBe('high')
    expect(observed[0]!.maxTokens).toBe(4096)
  })

  it('fails the call, unsent, when an observer throws', async () => {
    const failure = new Error('telemetry is down')
    test.ctx.on('llm/stream', () => {
      throw failure
    })
    await expect(test.ctx.llm.generate(request('p', 'plain'))).rejects.toBe(failure)
    expect(adapter.requests).toHaveLength(0)
  })

  it('fires llm/stream once per call', async () => {
    let calls = 0
    test.ctx.on('llm/stream', () => {
      calls++
    })
    await test.ctx.llm.generate(request('p', 'plain'))
    await test.ctx.llm.generate(request('p', 'plain'))
    expect(calls).toBe(2)
    expect(adapter.requests).toHaveLength(2)
  })

  it('rejects an effort the model does not accept, naming it and the accepted ones, before anyone sees the request', async () => {
    let observed = 0
    test.ctx.on('llm/stream', () => {
      observed++
    })
    const error = await expectLlmError(
      () => test.ctx.llm.generate(request('p', 'reasoner', { reasoningEffort: 'medium' })),
      'UNSUPPORTED_REASONING_EFFORT',
    )
    expect(error.message).toContain('"medium"')
    expect(error.message).toContain('p/reasoner')
    expect(error.message).toContain('low, high, max')
    expect(error.provider).toBe('p')
    expect(observed).toBe(0)
    expect(adapter.requests).toHaveLength(0)
  })

  it.each([0, -1, 1.5])('rejects maxTokens %s as INVALID_REQUEST', async (maxTokens) => {
    const error = await expectLlmError(
      () => test.ctx.llm.generate(request('p', 'plain', { maxTokens })),
      'INVALID_REQUEST',
    )
    expect(error.message).toContain(`got ${maxTokens}`)
    expect(adapter.requests).toHaveLength(0)
  })

  it('prepare() returns the materialized request without calling the adapter', async () => {
    const prepared = await test.ctx.llm.prepare(request('p', 'reasoner'))
    expect(prepared.reasoningEffort).toBe('high')
    expect(prepared.maxTokens).toBe(4096)
    expect(adapter.requests).toHaveLength(0)
  })
})
