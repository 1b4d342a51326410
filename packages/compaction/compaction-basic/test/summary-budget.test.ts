import type { SummaryAttempt } from '@warmfold/compaction'
import { isCheckpointMessage } from '@warmfold/compaction'
import type { GenerateOptions, StreamChunk, TokenUsage } from '@warmfold/llm'
import { reasoningBlock, textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { Session, SessionEvent } from '@warmfold/session'
import type { TokenMeter } from '@warmfold/token-meter'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@warmfold/agent-loop'
import type { BasicCompactionConfig } from '../src/index.ts'
import type { EngineHarness } from './engine-fixture.ts'
import { elements, growUntil, mountEngine, oneToolStepPerTurn, ROUTE, SUMMARY } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** The summary budget of the fixture's 8000-token model: the window less the default 10 % margin. */
const LIMIT = 7200

/**
 * A reasoning model's summary answers: at each effort it reasons `reasoning[effort]` tokens
 * before it writes the summary (`SUMMARY_TOKENS`). A cap below that ends the answer with
 * reasoning only (`max-tokens`), as a real reasoning model does. Each call's usage is distinct
 * and kept in `usages`, so the test can find every call's cost on the log.
 */
function reasoner(reasoning: Record<string, number>) {
  const usages: TokenUsage[] = []
  const reply = (request: GenerateOptions, index: number): ScriptedReply => {
    const cap = request.maxTokens!
    const needed = reasoning[request.reasoningEffort!]! + SUMMARY_TOKENS
    const usage = {
      inputTokens: 100 + index,
      cacheReadTokens: 5000,
      outputTokens: Math.min(cap, needed),
      reasoningTokens: Math.min(cap, needed - SUMMARY_TOKENS),
    }
    usages.push(usage)
    if (cap >= needed)
      return { content: [reasoningBlock('Weighing what the next step needs.'), textBlock(SUMMARY)], usage }
    return {
      content: [reasoningBlock('Weighing what the next step needs, file by file, decision by decision...')],
      finishReason: 'max-tokens',
      usage,
    }
  }
  return { reply, usages }
}

const SUMMARY_TOKENS = 100

/** A session above the threshold (auto off) at effort `effort`, ready for a direct compactIfNeeded. */
async function pressured(
  engine: BasicCompactionConfig,
  summary: (request: GenerateOptions, index: number) => ScriptedReply,
  effort = 'max',
): Promise<{ harness: EngineHarness; agent: Agent }> {
  const harness = await mountEngine({ engine: { auto: false, ...engine }, conversation: oneToolStepPerTurn, summary })
  harnesses.push(harness)
  const agent = await harness.ctx.agentLoop.create('budget', { ...ROUTE, reasoningEffort: effort })
  await growUntil(agent, () => harness.ctx.tokenMeter.measure(agent.session).totalTokens >= 6400)
  return { harness, agent }
}

function estimatePrompt(meter: TokenMeter, request: GenerateOptions): number {
  return (
    meter.estimateSystem(request.system) +
    meter.estimateTools(request.tools) +
    request.messages.reduce((sum, message) => sum + meter.estimateMessage(message), 0)
  )
}

/** A model (or a proxy) that keeps the stream open and never finishes, until `signal` aborts it. */
async function* endless(signal: AbortSignal | undefined): AsyncGenerator<StreamChunk> {
  yield { type: 'block-start', index: 0, blockType: 'text' }
  yield { type: 'text-delta', index: 0, delta: 'Goal: fix the build. ' }
  await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }))
  throw signal?.reason
}

function only<T extends 'compaction/summary' | 'compaction/end'>(session: Session, type: T): SessionEvent<T>['data'] {
  const events = session.events.filter((event) => event.type === type)
  expect(events, type).toHaveLength(1)
  return events[0]!.data as SessionEvent<T>['data']
}

function checkpoints(session: Session): number {
  return session.events.filter(
    (event) => event.type === 'user/message' && isCheckpointMessage((event.data as { message: never }).message),
  ).length
}

describe('a summary answer that spends its output cap on reasoning (summaryBudget)', () => {
  it('is retried on the same prompt with caps growing by summaryBudget.growth, and every call is recorded with its usage', async () => {
    const model = reasoner({ max: 1000 })
    const { harness, agent } = await pressured(
      { maxTokens: 400, summaryBudget: { retries: 3, growth: 1.5 } },
      model.reply,
    )
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).not.toBeNull()

    const calls = harness.summaries()
    // 400 → 600 → 900 still end in reasoning; 1350 holds 1000 of reasoning and the summary.
    expect(calls.map((call) => call.maxTokens)).toEqual([400, 600, 900, 1350])
    for (const call of calls.slice(1)) {
      // The same prompt, byte for byte, and the same cache-shaping envelope: only the cap differs.
      expect(elements(call)).toEqual(elements(calls[0]!))
      expect([call.reasoningEffort, call.temperature, call.stop]).toEqual([
        calls[0]!.reasoningEffort,
        calls[0]!.temperature,
        calls[0]!.stop,
      ])
    }
    const summary = only(agent.session, 'compaction/summary')
    expect(summary).toMatchObject({ reasoningEffort: 'max', maxTokens: 1350, usage: model.usages[3] })
    expect(summary.attempts).toEqual([
      { reason: 'first', maxTokens: 400, reasoningEffort: 'max', finishReason: 'max-tokens', usage: model.usages[0] },
      {
        reason: 'larger-cap',
        maxTokens: 600,
        reasoningEffort: 'max',
        finishReason: 'max-tokens',
        usage: model.usages[1],
      },
      {
        reason: 'larger-cap',
        maxTokens: 900,
        reasoningEffort: 'max',
        finishReason: 'max-tokens',
        usage: model.usages[2],
      },
      { reason: 'larger-cap', maxTokens: 1350, reasoningEffort: 'max', finishReason: 'stop', usage: model.usages[3] },
    ] satisfies SummaryAttempt[])
    expect(checkpoints(agent.session)).toBe(1)
    harness.assertClean()
  })

  it('never asks for more than the window leaves after the prompt, and then refuses by default with the reason and every call on compaction/end', async () => {
    const model = reasoner({ max: 50_000 })
    const { harness, agent } = await pressured({ maxTokens: 400, summaryBudget: { retries: 6 } }, model.reply)
    const before = agent.session.deriveMessages()
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull()

    const calls = harness.summaries()
    const ceiling = LIMIT - estimatePrompt(harness.ctx.tokenMeter, calls[0]!)
    expect(ceiling).toBeGreaterThan(800)
    expect(ceiling).toBeLessThan(1600)
    // Doubling from 400 reaches the ceiling on the third call; the other retries are not spent.
    expect(calls.map((call) => call.maxTokens)).toEqual([400, 800, ceiling])
    for (const call of calls)
      expect(estimatePrompt(harness.ctx.tokenMeter, call) + call.maxTokens!).toBeLessThanOrEqual(LIMIT)

    const end = only(agent.session, 'compaction/end')
    expect(end.error).toBe(
      `summary call returned no text: the model spent the whole output cap (maxTokens ${ceiling}) on reasoning; after 3 call(s) on the same prompt with maxTokens 400 → 800 → ${ceiling}, the last at the ceiling: all the summary budget leaves after the prompt (${ceiling} tokens); summaryBudget.fallbackEffort is not set, so no cold call at a lower effort was made; no checkpoint was committed`,
    )
    expect(end.attempts?.map((attempt) => [attempt.reason, attempt.maxTokens, attempt.finishReason])).toEqual([
      ['first', 400, 'max-tokens'],
      ['larger-cap', 800, 'max-tokens'],
      ['larger-cap', ceiling, 'max-tokens'],
    ])
    expect(end.attempts?.map((attempt) => attempt.usage)).toEqual(model.usages)
    expect(checkpoints(agent.session)).toBe(0)
    expect(agent.session.deriveMessages()).toEqual(before)
    expect(agent.session.events.at(-1)).toMatchObject({
      type: 'compaction/failure',
      data: { reason: `the summary was refused: ${end.error}` },
    })
    harness.assertClean()
  })

  it('replays the whole last request while its room holds the cap, and asks a larger cap on the region-only replay (narrower-replay)', async () => {
    const model = reasoner({ max: 1000 })
    // A 5 % margin: the whole last request leaves room for a 300-token cap, not for 600.
    const { harness, agent } = await pressured(
      { maxTokens: 300, summaryMarginRatio: 0.05, summaryBudget: { retries: 3 } },
      model.reply,
    )
    const last = harness.conversation().at(-1)!
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).not.toBeNull()

    const calls = harness.summaries()
    const [first, ...rest] = calls
    // The first call is the last conversation request whole, then the instruction: it reads that request's cache entry.
    expect(elements(first!).slice(0, -1)).toEqual(elements(last))
    const wholeCeiling = 7600 - estimatePrompt(harness.ctx.tokenMeter, first!)
    expect(wholeCeiling).toBeGreaterThanOrEqual(300)
    expect(wholeCeiling).toBeLessThan(600)
    // 600 does not fit after the whole request: it is asked on the region only, a strict prefix of it.
    expect(rest.map((call) => call.maxTokens)).toEqual([600, 1200])
    for (const call of rest) {
      expect(call.messages.length).toBeLessThan(first!.messages.length)
      // System, tools and the region's messages: the first call's elements up to the region's end.
      expect(elements(call).slice(0, -1)).toEqual(elements(first!).slice(0, call.messages.length + 1))
    }
    expect(
      only(agent.session, 'compaction/summary').attempts?.map((attempt) => [
        attempt.reason,
        attempt.maxTokens,
        attempt.finishReason,
      ]),
    ).toEqual([
      ['first', 300, 'max-tokens'],
      ['narrower-replay', 600, 'max-tokens'],
      ['larger-cap', 1200, 'stop'],
    ])
    harness.assertClean()
  })

  it('stops after summaryBudget.retries larger caps below the ceiling; retries 0 refuses after the first call', async () => {
    const model = reasoner({ max: 50_000 })
    const { harness, agent } = await pressured({ maxTokens: 300, summaryBudget: { retries: 1 } }, model.reply)
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull()
    expect(harness.summaries().map((call) => call.maxTokens)).toEqual([300, 600])
    expect(only(agent.session, 'compaction/end').error).toMatch(
      /after 2 call\(s\) on the same prompt with maxTokens 300 → 600 \(summaryBudget\.retries 1\); summaryBudget\.fallbackEffort is not set/,
    )

    const none = await pressured({ maxTokens: 300, summaryBudget: { retries: 0 } }, reasoner({ max: 50_000 }).reply)
    expect(await none.harness.ctx.compaction.compactIfNeeded(none.agent, 'pressure')).toBeNull()
    expect(none.harness.summaries()).toHaveLength(1)
    expect(only(none.agent.session, 'compaction/end').error).toMatch(
      /^summary call returned no text: the model spent the whole output cap \(maxTokens 300\) on reasoning; after 1 call\(s\)/,
    )
    harness.assertClean()
    none.harness.assertClean()
  })

  it('uses summaryBudget.fallbackEffort only after the larger caps, once, and logs it as a cache break with its cost', async () => {
    const model = reasoner({ max: 50_000, low: 200 })
    const { harness, agent } = await pressured(
      { maxTokens: 300, summaryBudget: { retries: 2, fallbackEffort: 'low' } },
      model.reply,
    )
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).not.toBeNull()

    const calls = harness.summaries()
    expect(calls.map((call) => [call.reasoningEffort, call.maxTokens])).toEqual([
      ['max', 300],
      ['max', 600],
      ['max', 1200],
      ['low', 1200],
    ])
    // Only the effort changes for the fallback: the same messages, system and tools.
    expect(elements(calls[3]!)).toEqual(elements(calls[0]!))
    const summary = only(agent.session, 'compaction/summary')
    // The envelope on the event is the fallback's, so the log shows the summary was not warm.
    expect(summary).toMatchObject({ reasoningEffort: 'low', maxTokens: 1200, usage: model.usages[3] })
    expect(summary.attempts?.at(-1)).toEqual({
      reason: 'fallback-effort',
      maxTokens: 1200,
      reasoningEffort: 'low',
      finishReason: 'stop',
      usage: model.usages[3],
    })
    expect(summary.attempts?.map((attempt) => attempt.usage)).toEqual(model.usages)
    expect(checkpoints(agent.session)).toBe(1)
    harness.assertClean()
  })

  it('refuses when the fallback effort does not help either, naming it as the cache break it was', async () => {
    const model = reasoner({ max: 50_000, low: 50_000 })
    const { harness, agent } = await pressured(
      { maxTokens: 400, summaryBudget: { retries: 1, fallbackEffort: 'low' } },
      model.reply,
    )
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull()
    expect(harness.summaries().map((call) => [call.reasoningEffort, call.maxTokens])).toEqual([
      ['max', 400],
      ['max', 800],
      ['low', 800],
    ])
    const end = only(agent.session, 'compaction/end')
    expect(end.error).toBe(
      'summary call returned no text: the model spent the whole output cap (maxTokens 800) on reasoning; that was the summaryBudget.fallbackEffort call at effort low (a cache break), after 2 call(s) on the same prompt with maxTokens 400 → 800; no checkpoint was committed',
    )
    expect(end.attempts?.map((attempt) => attempt.reason)).toEqual(['first', 'larger-cap', 'fallback-effort'])
    expect(end.attempts?.map((attempt) => attempt.usage)).toEqual(model.usages)
    harness.assertClean()
  })

  it('refuses without a call when the fallback effort is the one already used, or one the model does not accept', async () => {
    const same = await pressured(
      { maxTokens: 400, summaryBudget: { retries: 0, fallbackEffort: 'low' } },
      reasoner({ low: 50_000 }).reply,
      'low',
    )
    expect(await same.harness.ctx.compaction.compactIfNeeded(same.agent, 'pressure')).toBeNull()
    expect(same.harness.summaries()).toHaveLength(1)
    expect(only(same.agent.session, 'compaction/end').error).toMatch(
      /summaryBudget\.fallbackEffort "low" is the effort these calls already used; no checkpoint was committed$/,
    )
    same.harness.assertClean()

    const unknown = await pressured(
      { maxTokens: 400, summaryBudget: { retries: 0, fallbackEffort: 'minimal' } },
      reasoner({ max: 50_000 }).reply,
    )
    expect(await unknown.harness.ctx.compaction.compactIfNeeded(unknown.agent, 'pressure')).toBeNull()
    expect(unknown.harness.summaries()).toHaveLength(1)
    expect(only(unknown.agent.session, 'compaction/end').error).toMatch(
      /summaryBudget\.fallbackEffort "minimal" cannot be sent to scripted\/main: reasoningEffort "minimal" is not supported by scripted\/main; it accepts low, high, max$/,
    )
    unknown.harness.assertClean()
  })

  it.each<[string, ScriptedReply]>([
    [
      'text truncated at the cap',
      { content: [reasoningBlock('Thinking.'), textBlock('Goal: fix the bu')], finishReason: 'max-tokens' },
    ],
    ['no text at all (finish reason stop)', { content: [reasoningBlock('Thinking, and then nothing.')] }],
    ['no content at the cap', { content: [], finishReason: 'max-tokens' }],
  ])('retries %s with a larger cap, then commits the complete summary', async (_name, spent) => {
    const { harness, agent } = await pressured({ maxTokens: 400 }, (_request, index) =>
      index === 0 ? spent : { content: SUMMARY },
    )
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).not.toBeNull()
    expect(harness.summaries().map((call) => call.maxTokens)).toEqual([400, 800])
    expect(only(agent.session, 'compaction/summary').attempts?.map((attempt) => attempt.reason)).toEqual([
      'first',
      'larger-cap',
    ])
    harness.assertClean()
  })

  it('refuses at once an answer without text that more budget cannot fix (content filter)', async () => {
    const { harness, agent } = await pressured({ maxTokens: 400, summaryBudget: { fallbackEffort: 'low' } }, () => ({
      content: [],
      finishReason: 'content-filter',
    }))
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull()
    expect(harness.summaries()).toHaveLength(1)
    const end = only(agent.session, 'compaction/end')
    expect(end.error).toBe('summary call returned no text (finish reason content-filter)')
    expect(end.attempts).toEqual([
      { reason: 'first', maxTokens: 400, reasoningEffort: 'max', finishReason: 'content-filter' },
    ])
    harness.assertClean()
  })

  it.each([['content-filter'], ['error']] as const)(
    'never commits a summary with text that ended with finish reason %s (it may stop mid-summary)',
    async (finishReason) => {
      const { harness, agent } = await pressured({ maxTokens: 400 }, () => ({
        content: [textBlock('Goal: fix the build. Files: src/a.ts, src/b')],
        finishReason,
      }))
      const before = agent.session.deriveMessages()
      expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull()
      expect(harness.summaries()).toHaveLength(1)
      const end = only(agent.session, 'compaction/end')
      expect(end.error).toBe(
        `summary call ended with finish reason ${finishReason} after 43 characters of text, which may stop mid-summary; it is not committed`,
      )
      expect(agent.session.events.some((event) => event.type === 'compaction/summary')).toBe(false)
      expect(agent.session.deriveMessages()).toEqual(before)
      harness.assertClean()
    },
  )

  it("sizes the cap above the effort's output reserve (a thinking budget), and makes no call when the window cannot hold both", async () => {
    const reasoning = {
      efforts: ['low', 'high', 'max'],
      defaultEffort: 'high',
      outputReserveTokens: { max: 1000, high: 300 },
    }
    const harness = await mountEngine({
      engine: { auto: false, maxTokens: 400 },
      conversation: oneToolStepPerTurn,
      reasoning,
    })
    harnesses.push(harness)
    const agent = await harness.ctx.agentLoop.create('reserve', { ...ROUTE, reasoningEffort: 'max' })
    await growUntil(agent, () => harness.ctx.tokenMeter.measure(agent.session).totalTokens >= 6400)
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).not.toBeNull()
    expect(harness.summaries().map((call) => [call.reasoningEffort, call.maxTokens])).toEqual([['max', 1400]])

    // A reserve the summary budget cannot fit above: no call is made, and the reason names it.
    const tight = await mountEngine({
      engine: { auto: false, maxTokens: 400 },
      conversation: oneToolStepPerTurn,
      reasoning: { ...reasoning, outputReserveTokens: { max: 7000 } },
    })
    harnesses.push(tight)
    const squeezed = await tight.ctx.agentLoop.create('reserve', { ...ROUTE, reasoningEffort: 'max' })
    await growUntil(squeezed, () => tight.ctx.tokenMeter.measure(squeezed.session).totalTokens >= 6400)
    expect(await tight.ctx.compaction.compactIfNeeded(squeezed, 'pressure')).toBeNull()
    expect(tight.summaries()).toEqual([])
    const failure = squeezed.session.events.find((event) => event.type === 'compaction/failure')
    expect((failure!.data as { reason: string }).reason).toMatch(
      /^a summary call to main has no room for any history: its \d+-token budget goes to the system prompt, the tools, the instruction and the output \(the reasoning effort's 7000-token output reserve plus the summary's own budget\)$/,
    )
    harness.assertClean()
    tight.assertClean()
  })

  it('abandons a summary stream that never ends after summaryDeadlineMs, refusing the compaction with TIMEOUT', async () => {
    const { harness, agent } = await pressured({ maxTokens: 400, summaryDeadlineMs: 50 }, (request) => ({
      chunks: endless(request.signal),
    }))
    const before = agent.session.deriveMessages()
    expect(await harness.ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull()
    const end = only(agent.session, 'compaction/end')
    expect(end.error).toBe('summary call did not finish within summaryDeadlineMs (50 ms); no checkpoint was committed')
    expect(end.attempts).toEqual([{ reason: 'first', maxTokens: 400, reasoningEffort: 'max', finishReason: 'error' }])
    expect(agent.session.deriveMessages()).toEqual(before)
    harness.assertClean()
  })

  it('records the tool-call retry and a call aborted mid-retry on the log', async () => {
    const toolCall = await pressured({}, (_request, index) =>
      index === 0 ? { content: [toolCallBlock('x', 'read', '{}')] } : { content: SUMMARY },
    )
    expect(await toolCall.harness.ctx.compaction.compactIfNeeded(toolCall.agent, 'pressure')).not.toBeNull()
    expect(
      only(toolCall.agent.session, 'compaction/summary').attempts?.map((attempt) => [
        attempt.reason,
        attempt.finishReason,
      ]),
    ).toEqual([
      ['first', 'tool-calls'],
      ['tool-call', 'stop'],
    ])
    toolCall.harness.assertClean()

    const controller = new AbortController()
    const usage = { inputTokens: 7, outputTokens: 400 }
    const aborted = await pressured({ maxTokens: 400 }, (_request, index) => {
      if (index === 0) return { content: [reasoningBlock('Thinking.')], finishReason: 'max-tokens', usage }
      controller.abort(new Error('the user typed'))
      return { content: SUMMARY }
    })
    expect(
      await aborted.harness.ctx.compaction.compactIfNeeded(aborted.agent, 'pressure', controller.signal),
    ).toBeNull()
    const end = only(aborted.agent.session, 'compaction/end')
    expect(end.error).toMatch(/^summary call aborted: the user typed/)
    expect(end.attempts).toEqual([
      { reason: 'first', maxTokens: 400, reasoningEffort: 'max', finishReason: 'max-tokens', usage },
      { reason: 'larger-cap', maxTokens: 800, reasoningEffort: 'max', finishReason: 'aborted' },
    ])
    expect(checkpoints(aborted.agent.session)).toBe(0)
    aborted.harness.assertClean()
  })
})
