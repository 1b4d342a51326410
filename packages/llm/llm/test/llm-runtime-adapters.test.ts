import type { TestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { textOf } from '../src/index.ts'
import { ScriptedAdapter } from '../src/testing/index.ts'
import { expectLlmError, finish, mountRuntime, request } from './fixture.ts'

const MODEL = 'scripted-model'

function scripted(reply = 'ok'): ScriptedAdapter {
  return new ScriptedAdapter({ responses: { content: reply } })
}

describe('LlmRuntime adapter registry', () => {
  let test: TestContext

  beforeEach(async () => {
    test = await mountRuntime()
  })

  afterEach(() => finish(test))

  it('routes a call to the adapter registered for its provider', async () => {
    const first = scripted('from first')
    const second = scripted('from second')
    test.ctx.llm.registerAdapter(['a', 'b'], first)
    test.ctx.llm.registerAdapter('c', second)
    expect(test.ctx.llm.providers()).toEqual(['a', 'b', 'c'])
    expect(textOf((await test.ctx.llm.generate(request('b', MODEL))).content)).toBe('from first')
    expect(textOf((await test.ctx.llm.generate(request('c', MODEL))).content)).toBe('from second')
    expect(first.requests.map((options) => options.provider)).toEqual(['b'])
    expect(second.requests.map((options) => options.provider)).toEqual(['c'])
  })

  it('unregisters an adapter when the plugin that registered it unloads', async () => {
    const adapter = scripted()
    const fork = test.ctx.plugin({
      inject: ['llm'],
      apply(ctx) {
        ctx.llm.registerAdapter('p', adapter)
      },
    })
    await test.ctx.llm.generate(request('p', MODEL))
    expect(adapter.requests).toHaveLength(1)

    fork.dispose()
    expect(test.ctx.llm.providers()).toEqual([])
    await expectLlmError(() => test.ctx.llm.generate(request('p', MODEL)), 'UNKNOWN_PROVIDER')
    expect(adapter.requests).toHaveLength(1)
  })

  it('unregisters an adapter through the returned disposer, after which the id is free again', async () => {
    const adapter = scripted()
    const dispose = test.ctx.llm.registerAdapter(['p', 'q'], adapter)
    dispose()
    expect(test.ctx.llm.providers()).toEqual([])
    await expectLlmError(() => test.ctx.llm.generate(request('p', MODEL)), 'UNKNOWN_PROVIDER')
    test.ctx.llm.registerAdapter('p', scripted())
    expect(test.ctx.llm.providers()).toEqual(['p'])
  })

  it('reports an unknown provider with its name and the registered providers', async () => {
    const none = await expectLlmError(() => test.ctx.llm.generate(request('ghost', MODEL)), 'UNKNOWN_PROVIDER')
    expect(none.message).toContain('"ghost"')
    expect(none.message).toContain('registered providers: (none)')

    test.ctx.llm.registerAdapter(['zeta', 'alpha'], scripted())
    const some = await expectLlmError(() => test.ctx.llm.resolveModelInfo('ghost', MODEL), 'UNKNOWN_PROVIDER')
    expect(some.message).toContain('"ghost"')
    expect(some.message).toContain('registered providers: alpha, zeta')
    expect(some.provider).toBe('ghost')
    expect(some.retryable).toBe(false)
  })

  it('reports an unknown model with its name and never calls the adapter', async () => {
    const adapter = scripted()
    test.ctx.llm.registerAdapter('p', adapter)
    const error = await expectLlmError(() => test.ctx.llm.generate(request('p', 'nope')), 'UNKNOWN_MODEL')
    expect(error.message).toContain('"nope"')
    expect(error.message).toContain(MODEL)
    expect(adapter.requests).toHaveLength(0)
  })

  it('rejects a duplicate provider, naming it, and registers none of the ids of a failed call', () => {
    const original = scripted()
    test.ctx.llm.registerAdapter('p', original)
    expect(() => test.ctx.llm.registerAdapter('p', scripted())).toThrow('provider "p" is already registered')
    expect(() => test.ctx.llm.registerAdapter(['fresh', 'p'], scripted())).toThrow('"p"')
    expect(test.ctx.llm.providers()).toEqual(['p'])
  })

  it('rejects an empty provider list or id', () => {
    expect(() => test.ctx.llm.registerAdapter([], scripted())).toThrow('at least one provider id is required')
    expect(() => test.ctx.llm.registerAdapter('', scripted())).toThrow('provider id must be a non-empty string, got ""')
    expect(test.ctx.llm.providers()).toEqual([])
  })

  it('resolves model info through the adapter', async () => {
    test.ctx.llm.registerAdapter(
      'p',
      new ScriptedAdapter({
        models: { m: { contextWindow: 32000, defaultMaxTokens: 1000 } },
        responses: { content: 'ok' },
      }),
    )
    expect(await test.ctx.llm.resolveModelInfo('p', 'm')).toEqual({ contextWindow: 32000, defaultMaxTokens: 1000 })
  })
})
