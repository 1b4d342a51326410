import type { GenerateOptions } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { TokenMeter } from '@warmfold/token-meter'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { mountEngine, ROUTE, stopAfter, SUMMARY, WINDOW } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** The token meter's estimate of a request's prompt: system, tools and every message. */
function estimatePrompt(meter: TokenMeter, request: GenerateOptions): number {
  return (
    meter.estimateSystem(request.system) +
    meter.estimateTools(request.tools) +
    request.messages.reduce((sum, message) => sum + meter.estimateMessage(message), 0)
  )
}

/** What the strict provider counts: 10 % more prompt tokens than the meter's 4-characters estimate. */
const TOKENIZER_FACTOR = 1.1

/**
 * A provider whose tokenizer counts `TOKENIZER_FACTOR` × the estimate and that rejects, like a
 * real one, any request whose prompt + max_tokens exceeds the window. Summary calls included.
 */
async function strictEngine(
  engine: EngineHarnessOptions['engine'],
  steps: number,
): Promise<{ harness: EngineHarness; counted: (request: GenerateOptions) => number }> {
  let harness: EngineHarness | undefined
  const counted = (request: GenerateOptions) =>
    Math.ceil(estimatePrompt(harness!.ctx.tokenMeter, request) * TOKENIZER_FACTOR) + (request.maxTokens ?? 0)
  const strict =
    (reply: (request: GenerateOptions, index: number) => ScriptedReply) =>
    (request: GenerateOptions, index: number): ScriptedReply => {
      const total = counted(request)
      if (total > WINDOW)
        return {
          error: new LlmError(
            'CONTEXT_WINDOW_EXCEEDED',
            `prompt + max_tokens is ${total} tokens, the window is ${WINDOW}`,
          ),
        }
      return reply(request, index)
    }
  harness = await mountEngine({
    engine,
    conversation: strict(stopAfter(steps)),
    summary: strict(() => ({ content: SUMMARY })),
  })
  harnesses.push(harness)
  return { harness, counted }
}

describe('the summary call leaves a safety margin for the provider tokenizer', () => {
  it('at an 8k window a 60-step session keeps running: every summary call fits a provider that counts 10 % more', async () => {
    const { harness, counted } = await strictEngine({}, 60)
    const agent = await harness.ctx.agentLoop.create('margin', { ...ROUTE })
    agent.followup('Refactor the project.')
    await agent.whenIdle()
    agent.followup('Now the tests.')
    await agent.whenIdle()

    const events = agent.session.events
    expect(events.filter((event) => event.type === 'turn/end').map((event) => event.data)).toEqual([
      { turn: 1, reason: 'stop', steps: 61 },
      { turn: 2, reason: 'stop', steps: 1 },
    ])
    const summaries = harness.summaries()
    const committed = events.filter((event) => event.type === 'compaction/summary')
    expect(committed.length).toBeGreaterThanOrEqual(3)
    // Bounded: every summary call was accepted and committed a checkpoint, none was wasted.
    expect(summaries).toHaveLength(committed.length)
    for (const summary of summaries) expect(counted(summary)).toBeLessThanOrEqual(WINDOW)
    // The default margin is 10 % of the window: prompt estimate + maxTokens ≤ 7200.
    for (const summary of summaries)
      expect(estimatePrompt(harness.ctx.tokenMeter, summary) + summary.maxTokens!).toBeLessThanOrEqual(7200)
    expect(events.filter((event) => event.type === 'compaction/failure')).toEqual([])
    harness.assertClean()
  })

  it('without a margin, each rejected summary call is retried with a strictly smaller prompt + maxTokens, and the session keeps running', async () => {
    const { harness, counted } = await strictEngine({ summaryMarginRatio: 0 }, 60)
    const agent = await harness.ctx.agentLoop.create('no-margin', { ...ROUTE })
    agent.followup('Refactor the project.')
    await agent.whenIdle()

    expect(agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)).toEqual([
      { turn: 1, reason: 'stop', steps: 61 },
    ])
    const summaries = harness.summaries()
    const size = (request: GenerateOptions) => estimatePrompt(harness.ctx.tokenMeter, request) + request.maxTokens!
    const rejected = summaries.filter((summary) => counted(summary) > WINDOW)
    // Once: the session's later summary calls start from the budget the rejection taught.
    expect(rejected).toHaveLength(1)
    expect(agent.session.events.filter((event) => event.type === 'compaction/summary').length).toBeGreaterThanOrEqual(2)
    for (const summary of rejected) {
      const retry = summaries[summaries.indexOf(summary) + 1]!
      expect(size(retry), 'the retry must ask for less than the rejected call').toBeLessThan(size(summary))
      expect(counted(retry)).toBeLessThanOrEqual(WINDOW)
    }
    const ends = agent.session.events.filter(
      (event) => event.type === 'compaction/end',
    ) as SessionEvent<'compaction/end'>[]
    expect(ends.filter((event) => event.data.error !== undefined)).toHaveLength(rejected.length)
    // Bounded: one rejected call and one accepted retry per compaction at most.
    const committed = agent.session.events.filter((event) => event.type === 'compaction/summary').length
    expect(summaries.length).toBeLessThanOrEqual(2 * committed)
    harness.assertClean()
  })
})
