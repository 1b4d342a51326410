import type { GenerateOptions } from '@warmfold/llm'
import { canonicalJson, LlmError, promptView } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { mountEngine, oneToolStepPerTurn, ROUTE, SUMMARY } from './engine-fixture.ts'

/** A provider that rejects conversation prompts over `limit` estimated tokens. */
function tokenWindowed(
  harness: () => EngineHarness,
  limit: number,
  reply: (request: GenerateOptions, index: number) => ScriptedReply,
) {
  return (request: GenerateOptions, index: number): ScriptedReply => {
    const meter = harness().ctx.tokenMeter
    const size =
      meter.estimateSystem(request.system) +
      meter.estimateTools(request.tools) +
      request.messages.reduce((sum, message) => sum + meter.estimateMessage(message), 0)
    if (size > limit)
      return { error: new LlmError('CONTEXT_WINDOW_EXCEEDED', `prompt is ${size} tokens, the limit is ${limit}`) }
    return reply(request, index)
  }
}

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** A provider that rejects prompts over `limit` characters, like a real context window. */
function windowed(limit: number, reply: (request: GenerateOptions, index: number) => ScriptedReply) {
  return (request: GenerateOptions, index: number): ScriptedReply => {
    const size = canonicalJson([request.system ?? null, request.tools ?? [], request.messages.map(promptView)]).length
    if (size > limit)
      return { error: new LlmError('CONTEXT_WINDOW_EXCEEDED', `prompt is ${size} characters, the limit is ${limit}`) }
    return reply(request, index)
  }
}

describe('context-overflow recovery', () => {
  it('prunes first, summarizes the largest balanced head and retries once when the surface shrank', async () => {
    // The provider rejects at 16000 characters (about 4000 tokens), far below the pressure threshold.
    const engine = await mountEngine({
      engine: { thresholdRatio: 1 },
      pruner: { thresholdChars: 1000, headChars: 300, tailChars: 100 },
      conversation: windowed(16000, oneToolStepPerTurn),
      resultChars: (step) => (step % 3 === 0 ? 2000 : 600),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('overflow', { ...ROUTE })
    for (let turn = 0; turn < 14; turn++) {
      agent.followup(`turn ${turn}`)
      await agent.whenIdle()
    }
    const events = agent.session.events
    const starts = events.filter((event) => event.type === 'compaction/start') as SessionEvent<'compaction/start'>[]
    expect(starts.length).toBeGreaterThan(0)
    expect(starts.every((event) => event.data.trigger === 'context-overflow')).toBe(true)
    const firstStart = starts[0]!.seq
    const prunesBefore = events.filter((event) => event.type === 'compaction/prune' && event.seq < firstStart)
    expect(prunesBefore.length).toBeGreaterThan(0)
    // Every turn still ended normally: the retry after each recovery succeeded.
    const ends = events
      .filter((event) => event.type === 'turn/end')
      .map((event) => (event.data as { reason: string }).reason)
    expect(ends).toEqual(Array(14).fill('stop'))
    const rejected = engine
      .conversation()
      .filter(
        (request) =>
          canonicalJson([request.system ?? null, request.tools ?? [], request.messages.map(promptView)]).length > 16000,
      )
    expect(rejected.length).toBe(starts.length)
    engine.assertClean()
  })

  it('does not retry when nothing could be compacted, and never loops', async () => {
    const engine = await mountEngine({
      conversation: (_request, index) =>
        index === 0 ? { error: new LlmError('CONTEXT_WINDOW_EXCEEDED', 'prompt is too long') } : { content: 'ok' },
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('no-progress', { ...ROUTE })
    agent.followup('first message')
    await agent.whenIdle()
    expect(engine.conversation()).toHaveLength(1)
    expect(engine.summaries()).toHaveLength(0)
    expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: 'error', errorCode: 'CONTEXT_WINDOW_EXCEEDED' })
    engine.assertClean()
  })

  it('grants at most maxOverflowRetries retries until the agent answers again', async () => {
    const always = { error: new LlmError('CONTEXT_WINDOW_EXCEEDED', 'prompt is too long') }
    let conversationCalls = 0
    const engine = await mountEngine({
      engine: { thresholdRatio: 1 },
      conversation: (request, index) => {
        conversationCalls = index + 1
        return index < 12 ? oneToolStepPerTurn(request, index) : always
      },
      summary: () => ({ content: SUMMARY }),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('bounded', { ...ROUTE })
    for (let turn = 0; turn < 7; turn++) {
      agent.followup(`turn ${turn}`)
      await agent.whenIdle()
    }
    // Turns 0-5 used 12 calls; turn 6 overflows: one compaction, one retry, then the error stands.
    expect(conversationCalls).toBe(14)
    expect(engine.summaries()).toHaveLength(1)
    expect(agent.session.events.at(-1)?.data).toMatchObject({ reason: 'error', errorCode: 'CONTEXT_WINDOW_EXCEEDED' })
    engine.assertClean()
  })

  it('summarizes a smaller head when the provider rejects the summary prompt itself as too long', async () => {
    const limit = 16000
    const engine = await mountEngine({
      engine: { thresholdRatio: 1 },
      conversation: windowed(limit, oneToolStepPerTurn),
      // The summary prompt is the replayed head plus the instruction; the same provider limit applies.
      summary: (request) => windowed(limit, () => ({ content: SUMMARY }))(request, 0),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('shrink', { ...ROUTE })
    for (let turn = 0; turn < 10; turn++) {
      agent.followup(`turn ${turn}`)
      await agent.whenIdle()
    }
    const events = agent.session.events
    const ends = events.filter((event) => event.type === 'compaction/end') as SessionEvent<'compaction/end'>[]
    const refused = ends.filter((event) => event.data.error?.includes('CONTEXT_WINDOW_EXCEEDED'))
    expect(refused.length).toBeGreaterThan(0)
    const summaries = events.filter(
      (event) => event.type === 'compaction/summary',
    ) as SessionEvent<'compaction/summary'>[]
    expect(summaries.length).toBeGreaterThan(0)
    // Each refused summary was followed by one over a smaller head that the provider accepted.
    const sizes = engine
      .summaries()
      .map(
        (summary) =>
          canonicalJson([summary.system ?? null, summary.tools ?? [], summary.messages.map(promptView)]).length,
      )
    expect(sizes.some((size) => size > limit)).toBe(true)
    expect(summaries.length).toBe(sizes.filter((size) => size <= limit).length)
    expect(
      events.filter((event) => event.type === 'turn/end').map((event) => (event.data as { reason: string }).reason),
    ).toEqual(Array(10).fill('stop'))
    engine.assertClean()
  })

  it.each([
    [1, 'error'],
    [3, 'stop'],
  ])(
    'honours maxOverflowRetries = %i: each retry follows a recovery that really shrank the surface',
    async (maxOverflowRetries, reason) => {
      // Summaries go to a 2400-token model, so one recovery folds only about 1100 tokens of head;
      // a 2600-token result lands on a 2400-token conversation whose provider takes 3000.
      let engine: EngineHarness | undefined
      engine = await mountEngine({
        engine: {
          thresholdRatio: 1,
          maxOverflowRetries,
          summarizationProvider: 'scripted',
          summarizationModel: 'small',
        },
        conversation: tokenWindowed(() => engine!, 3000, oneToolStepPerTurn),
        resultChars: (step) => (step === 12 ? 10400 : 600),
      })
      harnesses.push(engine)
      const agent = await engine.ctx.agentLoop.create('retries', { ...ROUTE })
      const surfaces: number[] = []
      engine.ctx.on(
        'agent/request-error',
        ({ agent: erring }) => void surfaces.push(engine!.ctx.tokenMeter.measure(erring.session).surfaceTokens),
        true,
      )
      for (let turn = 0; turn < 13; turn++) {
        agent.followup(`turn ${turn}`)
        await agent.whenIdle()
      }
      const ends = agent.session.events
        .filter((event) => event.type === 'turn/end')
        .map((event) => event.data as { reason: string; errorCode?: string })
      expect(ends.slice(0, 12).every((end) => end.reason === 'stop')).toBe(true)
      expect(ends[12]).toMatchObject({
        reason,
        ...(reason === 'error' ? { errorCode: 'CONTEXT_WINDOW_EXCEEDED' } : {}),
      })
      // One recovery (one summary call) per granted retry, and every one shrank the surface.
      expect(engine.summaries()).toHaveLength(maxOverflowRetries)
      const starts = agent.session.events.filter(
        (event) => event.type === 'compaction/start',
      ) as SessionEvent<'compaction/start'>[]
      expect(starts.map((event) => event.data.trigger)).toEqual(Array(maxOverflowRetries).fill('context-overflow'))
      // Rejected requests: one per granted retry, plus the last one when the error stands.
      expect(surfaces).toHaveLength(reason === 'stop' ? maxOverflowRetries : maxOverflowRetries + 1)
      for (let index = 1; index < surfaces.length; index++) expect(surfaces[index]).toBeLessThan(surfaces[index - 1]!)
      engine.assertClean()
    },
  )
})
