import type { GenerateOptions, Message } from '@warmfold/llm'
import { createUserMessage } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import type { CacheObservation } from '../src/index.ts'
import { assertNoSilentRewrite, hitRatio, PrefixCache, totalsOf } from '../src/index.ts'
import { silentRewrites, uncachedTokens } from '../src/cache-assertions.ts'
import { promptText, request, toolStep, TOOLS } from './prefix-cache-fixture.ts'

const HEAD = { tools: TOOLS, system: 'You are careful.', reasoningEffort: 'max' }

function conversation(
  messages: readonly Message[],
  sessionId = 's',
  extra: Partial<GenerateOptions> = {},
): GenerateOptions {
  return request(messages, { ...HEAD, purpose: 'conversation', sessionId, ...extra })
}

function summary(messages: readonly Message[], sessionId = 's'): GenerateOptions {
  return request([...messages, createUserMessage('Summarize the conversation so far.')], {
    ...HEAD,
    purpose: 'compaction',
    sessionId,
  })
}

const start = createUserMessage('Refactor the loader.')
const step0 = toolStep(0)
const step1 = toolStep(1)
const step2 = toolStep(2)

describe('extendsPrevious and rewritesSince', () => {
  it('marks a session’s first conversation request as not extending, and each append-only successor as extending', () => {
    const cache = new PrefixCache()
    const first = cache.observe(conversation([start]))
    const second = cache.observe(conversation([start, ...step0]))
    const third = cache.observe(conversation([start, ...step0, ...step1]))
    expect(first).toMatchObject({ extendsPrevious: false, rewritesSince: [] })
    expect(second).toMatchObject({ extendsPrevious: true, rewritesSince: [] })
    expect(third).toMatchObject({ extendsPrevious: true, rewritesSince: [] })
    expect(silentRewrites(cache.observations)).toEqual([])
    expect(() => assertNoSilentRewrite(cache.observations)).not.toThrow()
  })

  it('does not count an identical repeat, or a request in another family, as an extension', () => {
    const cache = new PrefixCache()
    cache.observe(conversation([start, ...step0]))
    expect(cache.observe(conversation([start, ...step0])).extendsPrevious).toBe(false)
    expect(
      cache.observe(conversation([start, ...step0, ...step1], 's', { reasoningEffort: 'low' })).extendsPrevious,
    ).toBe(false)
  })

  it('lists the rewrites noted since the previous conversation request, then starts over', () => {
    const cache = new PrefixCache()
    cache.observe(conversation([start, ...step0]))
    cache.noteRewrite('s', { type: 'compaction/prune', seq: 7 })
    cache.noteRewrite('s', { type: 'compaction/summary', seq: 9 })
    cache.noteRewrite('other', { type: 'request/header', seq: 2 })
    const checkpoint = createUserMessage('<compacted-summary>…</compacted-summary>')
    const after = cache.observe(conversation([checkpoint, ...step1]))
    expect(after.extendsPrevious).toBe(false)
    expect(after.rewritesSince).toEqual([
      { type: 'compaction/prune', seq: 7 },
      { type: 'compaction/summary', seq: 9 },
    ])
    expect(Object.isFrozen(after.rewritesSince)).toBe(true)
    expect(cache.observe(conversation([checkpoint, ...step1, ...step2])).rewritesSince).toEqual([])
    expect(cache.observe(conversation([start], 'other')).rewritesSince).toEqual([{ type: 'request/header', seq: 2 }])
  })

  it('a summary request sees pending rewrites but neither consumes them nor becomes the previous conversation request', () => {
    const cache = new PrefixCache()
    cache.observe(conversation([start, ...step0]))
    cache.noteRewrite('s', { type: 'compaction/prune', seq: 4 })
    const summaryCall = cache.observe(summary([start, ...step0]))
    expect(summaryCall).toMatchObject({
      purpose: 'compaction',
      extendsPrevious: false,
      rewritesSince: [{ type: 'compaction/prune', seq: 4 }],
    })
    const next = cache.observe(conversation([start, ...step0, ...step1]))
    expect(next.extendsPrevious).toBe(true)
    expect(next.rewritesSince).toEqual([{ type: 'compaction/prune', seq: 4 }])
  })

  it('keeps sessions apart, and leaves requests without a session out', () => {
    const cache = new PrefixCache()
    cache.observe(conversation([start], 'a'))
    cache.observe(conversation([createUserMessage('other task')], 'b'))
    expect(cache.observe(conversation([start, ...step0], 'a')).extendsPrevious).toBe(true)
    const anonymous = cache.observe(request([start, ...step0, ...step1], { ...HEAD, purpose: 'conversation' }))
    expect(anonymous).toMatchObject({ sessionId: undefined, extendsPrevious: false, rewritesSince: [] })
    expect(silentRewrites(cache.observations)).toEqual([])
  })
})

describe('silentRewrites and assertNoSilentRewrite (rule C1)', () => {
  it('flag a conversation request that rewrote an earlier message with no logged rewrite', () => {
    const cache = new PrefixCache()
    cache.observe(conversation([start, ...step0]))
    const rewritten = [start, step0[0]!, createUserMessage('[pruned]')]
    const silent = cache.observe(conversation([...rewritten, ...step1]))
    expect(silent.extendsPrevious).toBe(false)
    expect(silentRewrites(cache.observations)).toEqual([silent])
    expect(() => assertNoSilentRewrite(cache.observations)).toThrow(/silent prefix rewrite \(rule C1\)/)
    expect(() => assertNoSilentRewrite({ cache })).toThrow(
      `request 1 (session s): diverges at ${JSON.stringify(silent.divergence)} with no logged rewrite`,
    )
    expect(silent.divergence).toMatchObject({ part: 'message', index: 2, blockIndex: 0 })
  })

  it('accept the same rewrite when it was logged in between', () => {
    const cache = new PrefixCache()
    cache.observe(conversation([start, ...step0]))
    cache.noteRewrite('s', { type: 'compaction/prune', seq: 5 })
    const explained = cache.observe(conversation([start, step0[0]!, createUserMessage('[pruned]'), ...step1]))
    expect(explained.extendsPrevious).toBe(false)
    expect(explained.rewritesSince).toEqual([{ type: 'compaction/prune', seq: 5 }])
    expect(silentRewrites(cache.observations)).toEqual([])
    expect(() => assertNoSilentRewrite({ cache })).not.toThrow()
  })

  it('never count a summary request, however cold', () => {
    const cache = new PrefixCache()
    cache.observe(conversation([start, ...step0]))
    cache.observe(
      request([createUserMessage('flattened transcript')], {
        system: 'You summarize.',
        purpose: 'compaction',
        sessionId: 's',
      }),
    )
    cache.observe(summary([createUserMessage('rewritten history')]))
    cache.observe(conversation([start, ...step0, ...step1]))
    expect(cache.observations.map((observation) => observation.extendsPrevious)).toEqual([false, false, false, true])
    expect(silentRewrites(cache.observations)).toEqual([])
  })

  it('flag an envelope change without a header event, and accept it with one', () => {
    const silent = new PrefixCache()
    silent.observe(conversation([start]))
    silent.observe(conversation([start, ...step0], 's', { reasoningEffort: 'low' }))
    expect(silentRewrites(silent.observations)).toHaveLength(1)

    const logged = new PrefixCache()
    logged.observe(conversation([start]))
    logged.noteRewrite('s', { type: 'request/header', seq: 3 })
    logged.observe(conversation([start, ...step0], 's', { reasoningEffort: 'low' }))
    expect(silentRewrites(logged.observations)).toEqual([])
  })

  it('report every silent request of a run, each with its own divergence', () => {
    const cache = new PrefixCache()
    cache.observe(conversation([start, ...step0]))
    cache.observe(conversation([createUserMessage('changed start'), ...step0]))
    cache.observe(conversation([createUserMessage('changed again'), ...step0]))
    const silent = silentRewrites(cache.observations)
    expect(silent.map((observation) => observation.index)).toEqual([1, 2])
    let message = ''
    try {
      assertNoSilentRewrite(cache.observations)
    } catch (error) {
      message = (error as Error).message
    }
    expect(message.split('\n')).toEqual([
      'silent prefix rewrite (rule C1):',
      `request 1 (session s): diverges at ${JSON.stringify(silent[0]!.divergence)} with no logged rewrite`,
      `request 2 (session s): diverges at ${JSON.stringify(silent[1]!.divergence)} with no logged rewrite`,
    ])
  })
})

describe('hitRatio, uncachedTokens and totalsOf', () => {
  it('compute per-observation and summed figures from prompt and cached tokens', () => {
    const cache = new PrefixCache()
    const messages = [start, ...step0]
    const first = cache.observe(conversation(messages))
    const second = cache.observe(conversation([...messages, ...step1]))
    const firstTokens = Math.ceil(promptText(conversation(messages)).length / 4)
    const secondTokens = Math.ceil(promptText(conversation([...messages, ...step1])).length / 4)
    const secondCached = Math.floor(promptText(conversation(messages)).length / 4)
    expect(hitRatio(first)).toBe(0)
    expect(uncachedTokens(first)).toBe(firstTokens)
    expect(hitRatio(second)).toBeCloseTo(secondCached / secondTokens, 12)
    expect(uncachedTokens(second)).toBe(secondTokens - secondCached)
    expect(totalsOf([first, second])).toEqual({
      requests: 2,
      promptTokens: firstTokens + secondTokens,
      cachedTokens: secondCached,
      uncachedTokens: firstTokens + secondTokens - secondCached,
      hitRatio: secondCached / (firstTokens + secondTokens),
    })
  })

  it('give 0 for an empty prompt and for no observations', () => {
    const empty = new PrefixCache().observe(request([]))
    expect(hitRatio(empty)).toBe(0)
    expect(uncachedTokens(empty)).toBe(0)
    expect(totalsOf([] as CacheObservation[])).toEqual({
      requests: 0,
      promptTokens: 0,
      cachedTokens: 0,
      uncachedTokens: 0,
      hitRatio: 0,
    })
  })
})
