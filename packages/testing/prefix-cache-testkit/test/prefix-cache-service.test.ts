import type { GenerateOptions } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  LlmRuntime,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import PrefixCacheServiceDefault, { PrefixCacheService } from '../src/index.ts'
import { familyOf } from '../src/prefix-cache.ts'
import { promptText, ROUTE } from './prefix-cache-fixture.ts'

const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

interface Harness extends TestContext {
  adapter: ScriptedAdapter
  /** Everything `llm/stream` delivered, in order (a listener registered after the service's). */
  streamed: GenerateOptions[]
}

async function mount(config: { profile?: string } = {}): Promise<Harness> {
  const context = await createTestContext()
  contexts.push(context)
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(PrefixCacheService, config)
  const adapter = new ScriptedAdapter({
    models: {
      coder: {
        contextWindow: 8000,
        defaultMaxTokens: 300,
        reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
      },
    },
    responses: { content: 'ok' },
  })
  ctx.llm.registerAdapter(ROUTE.provider, adapter)
  const streamed: GenerateOptions[] = []
  ctx.on('llm/stream', (options) => void streamed.push(options))
  return { ...context, adapter, streamed }
}

const hello = createUserMessage('Hello, please read the loader and explain it.')

describe('PrefixCacheService (ctx.prefixCache)', () => {
  it('is the default export and defaults to the bytes profile', async () => {
    expect(PrefixCacheServiceDefault).toBe(PrefixCacheService)
    const harness = await mount()
    expect(harness.ctx.prefixCache.cache.profile).toEqual({ kind: 'bytes', name: 'bytes', ttlMs: Infinity })
    harness.assertClean()
  })

  it('uses the configured profile', async () => {
    const harness = await mount({ profile: 'blocks:128:1024' })
    expect(harness.ctx.prefixCache.cache.profile).toEqual({
      kind: 'blocks',
      name: 'blocks:128:1024',
      blockTokens: 128,
      minTokens: 1024,
      ttlMs: Infinity,
    })
    harness.assertClean()
  })

  it('observes exactly what llm/stream delivers, with the effort the runtime materialized in the family', async () => {
    const harness = await mount()
    const { ctx, adapter, streamed } = harness
    await ctx.llm.generate({ ...ROUTE, messages: [hello], purpose: 'conversation', sessionId: 's' })
    expect(streamed).toHaveLength(1)
    const sent = streamed[0]!
    expect(adapter.requests[0]).toBe(sent)
    expect(sent).toMatchObject({ reasoningEffort: 'high', maxTokens: 300 })
    const [observation] = ctx.prefixCache.observations
    expect(observation).toMatchObject({
      index: 0,
      purpose: 'conversation',
      sessionId: 's',
      promptChars: promptText(sent).length,
      divergence: { part: 'first' },
    })
    expect(observation!.family).toBe(familyOf(sent))
    expect(observation!.family).toBe(familyOf({ ...ROUTE, messages: [], reasoningEffort: 'high' }))

    // Sending the default effort explicitly lands in the same family: a full hit.
    await ctx.llm.generate({ ...ROUTE, messages: [hello], reasoningEffort: 'high', maxTokens: 50 })
    const chars = promptText(sent).length
    expect(ctx.prefixCache.observations[1]).toMatchObject({
      family: observation!.family,
      cachedTokens: Math.floor(chars / 4),
      divergence: { part: 'none' },
    })

    // Another effort is another family.
    await ctx.llm.generate({ ...ROUTE, messages: [hello], reasoningEffort: 'low' })
    expect(ctx.prefixCache.observations[2]).toMatchObject({
      cachedTokens: 0,
      divergence: { part: 'envelope', field: 'reasoningEffort' },
    })
    expect(ctx.prefixCache.totals()).toEqual(ctx.prefixCache.cache.totals())
    expect(ctx.prefixCache.totals((item) => item.purpose === 'conversation').requests).toBe(1)
    harness.assertClean()
  })

  it('does not observe a call that is aborted before it is sent', async () => {
    const harness = await mount()
    const controller = new AbortController()
    controller.abort()
    await expect(
      harness.ctx.llm.generate({ ...ROUTE, messages: [hello], signal: controller.signal }),
    ).rejects.toMatchObject({ code: 'ABORTED' })
    expect(harness.ctx.prefixCache.observations).toEqual([])
    harness.assertClean()
  })

  it('notes compaction/summary, compaction/prune and non-initial request/header events per session', async () => {
    const harness = await mount()
    const { ctx } = harness
    const session = await ctx.sessions.create('s')
    const other = await ctx.sessions.create('t')
    const header = { config: { ...ROUTE, reasoningEffort: 'max' } }
    session.append('request/header', { header, reason: 'initial' })
    const user = session.append('user/message', { message: hello }, 'append')
    const change = session.append('request/header', {
      header: { config: { ...ROUTE, reasoningEffort: 'low' } },
      reason: 'change',
    })
    const resume = session.append('request/header', { header, reason: 'resume' })
    const prune = session.append('compaction/prune', {
      shadowedRange: { start: 0, end: 0 },
      shadowedSeqs: [user.seq],
      shadowedTokenCount: 12,
    })
    const summary = session.append('compaction/summary', {
      compactionId: 'c1',
      summary: [textBlock('the summary')],
      shadowedRange: { start: 0, end: 0 },
      shadowedSeqs: [user.seq],
      shadowedTokenCount: 12,
      ...ROUTE,
    })
    session.append('compaction/start', { compactionId: 'c2', turn: null, trigger: 'manual' })
    other.append('request/header', { header, reason: 'change' })

    await ctx.llm.generate({ ...ROUTE, messages: [hello], purpose: 'conversation', sessionId: 's' })
    const [observation] = ctx.prefixCache.observations
    expect(observation!.rewritesSince).toEqual([
      { type: 'request/header', seq: change.seq },
      { type: 'request/header', seq: resume.seq },
      { type: 'compaction/prune', seq: prune.seq },
      { type: 'compaction/summary', seq: summary.seq },
    ])
    // Consumed by that conversation request; the other session keeps its own.
    await ctx.llm.generate({ ...ROUTE, messages: [hello], purpose: 'conversation', sessionId: 's' })
    expect(ctx.prefixCache.observations[1]!.rewritesSince).toEqual([])
    await ctx.llm.generate({ ...ROUTE, messages: [hello], purpose: 'conversation', sessionId: 't' })
    expect(ctx.prefixCache.observations[2]!.rewritesSince).toEqual([{ type: 'request/header', seq: 0 }])
    harness.assertClean()
  })

  it('notes no rewrite for events that only extend the log: surface appends, turn events, brackets, failures, the initial header', async () => {
    // A wider filter (say, every assistant/message) would explain every break and so disable
    // the no-silent-rewrite check (rule C1) without any spec failing.
    const harness = await mount()
    const { ctx } = harness
    const session = await ctx.sessions.create('quiet')
    session.append('request/header', { header: { config: { ...ROUTE, reasoningEffort: 'max' } }, reason: 'initial' })
    session.append('turn/start', { turn: 0 })
    session.append('user/message', { message: hello }, 'append')
    session.append(
      'assistant/message',
      {
        message: createAssistantMessage([textBlock('Reading.'), toolCallBlock('call-0', 'read', '{}')], ROUTE),
        turn: 0,
        step: 0,
      },
      'append',
    )
    session.append(
      'tool/result',
      { message: createToolResultMessage('call-0', 'the loader'), toolName: 'read', turn: 0, step: 0 },
      'append',
    )
    session.append('assistant/partial', { turn: 0, step: 1, content: [textBlock('The lo')], reason: 'aborted' })
    session.append(
      'assistant/message',
      { message: createAssistantMessage([textBlock('The loader reads modules.')], ROUTE), turn: 0, step: 1 },
      'append',
    )
    session.append('turn/end', { turn: 0, reason: 'stop', steps: 2 })
    session.append('compaction/start', { compactionId: 'c1', turn: null, trigger: 'manual' })
    session.append('compaction/end', { compactionId: 'c1', turn: null, error: 'the summary call was refused' })
    session.append('compaction/failure', {
      trigger: 'pressure',
      reason: 'irreducible tail',
      totalTokens: 900,
      thresholdTokens: 800,
    })
    await ctx.llm.generate({ ...ROUTE, messages: [hello], purpose: 'conversation', sessionId: 'quiet' })
    expect(ctx.prefixCache.observations[0]!.rewritesSince).toEqual([])
    // One real rewrite after them is noted alone.
    const prune = session.append('compaction/prune', {
      shadowedRange: { start: 2, end: 2 },
      shadowedSeqs: [4],
      shadowedTokenCount: 5,
    })
    session.append('user/message', { message: createUserMessage('Go on.') }, 'append')
    await ctx.llm.generate({ ...ROUTE, messages: [hello], purpose: 'conversation', sessionId: 'quiet' })
    expect(ctx.prefixCache.observations[1]!.rewritesSince).toEqual([{ type: 'compaction/prune', seq: prune.seq }])
    harness.assertClean()
  })

  it('stops observing when its plugin is unloaded', async () => {
    const harness = await mount()
    const cache = harness.ctx.prefixCache.cache
    const fork = harness.ctx.registry.get(PrefixCacheService)
    expect(fork).toBeDefined()
    fork!.dispose()
    await harness.ctx.llm.generate({ ...ROUTE, messages: [hello] })
    expect(harness.streamed).toHaveLength(1)
    expect(cache.observations).toEqual([])
    harness.assertClean()
  })

  it.each(['blocks:0', 'lru', 'blocks:16:'])(
    'rejects the profile %j at load with an internal error naming it',
    async (profile) => {
      const context = await createTestContext()
      contexts.push(context)
      context.ctx.plugin(PrefixCacheService, { profile })
      // The constructor runs when the plugin is applied, and cordis reports its error after a tick.
      await new Promise((resolve) => setTimeout(resolve, 0))
      expect(context.errors.map(String).join('\n')).toContain(
        `cache profile ${JSON.stringify(profile)} is not valid; use bytes[:ttl=S] | blocks:N[:MIN][:ttl=S] | anthropic[:1h|:ttl=S] | deepseek[:ttl=S]`,
      )
      expect(context.ctx.get('prefixCache')).toBeUndefined()
      expect(() => context.assertClean()).toThrow(/cache profile/)
    },
  )

  it('rejects an unknown config key at load', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(PrefixCacheService, { profil: 'bytes' } as never)
    expect(context.errors.map(String).join('\n')).toMatch(
      /PrefixCacheService config: unknown key "profil" \(did you mean "profile"\?\); known keys: profile/,
    )
    expect(context.ctx.get('prefixCache')).toBeUndefined()
  })
})
