import { balancedCuts } from '@warmfold/compaction'
import { canonicalJson, promptView, textBlock, textOf, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { frameCheckpoint, selectRegion } from '../src/engine-parts.ts'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import {
  conversationBefore,
  filler,
  growUntil,
  mountEngine,
  oneToolStepPerTurn,
  ROUTE,
  SUMMARY,
} from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** 0.8 × the 8000-token window of the fixture's `main` model. */
const THRESHOLD = 6400
/** 0.16 × 8000: the default retained tail. */
const RETAIN = 1280

async function harness(options: EngineHarnessOptions): Promise<EngineHarness> {
  const created = await mountEngine(options)
  harnesses.push(created)
  return created
}

function compactionTypes(events: readonly { type: string }[]): string[] {
  return events
    .filter((event) => event.type.startsWith('compaction/'))
    .map((event) => event.type.slice('compaction/'.length))
}

/** Grows a session of one-step turns to `tokens`, with summaries sent to the 2400-token `small` model. */
async function pressuredOnSmallSummarizer(compactionRetries?: number) {
  const engine = await harness({
    engine: {
      auto: false,
      summarizationProvider: 'scripted',
      summarizationModel: 'small',
      ...(compactionRetries === undefined ? {} : { compactionRetries }),
    },
    conversation: oneToolStepPerTurn,
    resultChars: 600,
  })
  const agent = await engine.ctx.agentLoop.create('passes', { ...ROUTE, reasoningEffort: 'max' })
  // About 1,240 tokens over the threshold: more than one summary call on a 2400-token
  // summarizer can fold, less than two can.
  await growUntil(agent, () => engine.ctx.tokenMeter.measure(agent.session).totalTokens >= THRESHOLD + 1200)
  const atSummary: number[] = []
  engine.ctx.on('llm/stream', (request) => {
    if (request.purpose === 'compaction') atSummary.push(engine.ctx.tokenMeter.measure(agent.session).totalTokens)
  })
  return { engine, agent, atSummary }
}

/** One turn of tool steps (every result 1100 characters) until `steps`, then an answer. */
function readSteps(steps: number): (request: unknown, index: number) => ScriptedReply {
  return (_request, index) =>
    index >= steps
      ? { content: 'All done.' }
      : {
          content: [
            textBlock(`Step ${index}: reading. ${filler(index, 80)}`),
            toolCallBlock(`call-${index}`, 'read', `{"path":"src/file-${index}.ts"}`),
          ],
        }
}

describe('pressure passes', () => {
  it('runs the second pass (compactionRetries) when the first summary leaves the session above the threshold', async () => {
    const { engine, agent, atSummary } = await pressuredOnSmallSummarizer()
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).not.toBeNull()
    const summaries = engine.summaries()
    expect(summaries).toHaveLength(2)
    expect(compactionTypes(agent.session.events)).toEqual([
      'start',
      'summary',
      'audit',
      'end',
      'start',
      'summary',
      'audit',
      'end',
    ])
    // The first pass alone did not relieve the pressure; the second did.
    expect(atSummary[1]).toBeGreaterThanOrEqual(THRESHOLD)
    expect(engine.ctx.tokenMeter.measure(agent.session).totalTokens).toBeLessThan(THRESHOLD)
    // The second pass folds the first checkpoint with the next head.
    expect(textOf(summaries[1]!.messages[0]!.content)).toBe(frameCheckpoint(SUMMARY))
    engine.assertClean()
  })

  it('with compactionRetries 0, makes no summary call when one pass cannot relieve the pressure, and logs why', async () => {
    const { engine, agent } = await pressuredOnSmallSummarizer(0)
    await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(engine.summaries()).toHaveLength(0)
    const failures = agent.session.events.filter(
      (event) => event.type === 'compaction/failure',
    ) as SessionEvent<'compaction/failure'>[]
    expect(failures).toHaveLength(1)
    expect(failures[0]!.data.reason).toMatch(/^the retained tail is irreducible: summarizing positions 0\.\.\d+ /)
    expect(engine.ctx.tokenMeter.measure(agent.session).totalTokens).toBeGreaterThanOrEqual(THRESHOLD)
    engine.assertClean()
  })

  it('selects the region on the actual prices of the retained tail, so the prune shrinks the request after the fold', async () => {
    // Two oversized results near the end; the prune saves too little to clear the pressure
    // alone, but enough that the retained tail, priced after the prune, would reach further back
    // and spend what the prune saves on a longer tail.
    const engine = await harness({
      engine: { auto: false, summarizationProvider: 'scripted', summarizationModel: 'other' },
      pruner: { thresholdChars: 1000, headChars: 300, tailChars: 100 },
      conversation: oneToolStepPerTurn,
      resultChars: (step) => (step === 26 || step === 27 ? 2000 : 600),
    })
    const agent = await engine.ctx.agentLoop.create('projected', { ...ROUTE, reasoningEffort: 'max' })
    await growUntil(agent, () => engine.ctx.tokenMeter.measure(agent.session).totalTokens >= THRESHOLD + 1000)
    const actual = engine.ctx.tokenMeter.measure(agent.session).nodes.map((node) => node.tokens)
    const plan = engine.ctx.toolResultPruner.planSession(agent.session)
    expect(plan).toHaveLength(2)
    const projected = actual.slice()
    for (const entry of plan) projected[entry.position] = entry.prunedTokens
    const cuts = balancedCuts(agent.session.deriveMessages())
    const onProjected = selectRegion(projected, cuts, RETAIN)!
    const expected = selectRegion(actual, cuts, RETAIN)!
    // The case tells the two pricings apart.
    expect(onProjected.end).toBeLessThan(expected.end)

    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result!.shadowedRange).toEqual(expected)
    expect(engine.summaries()).toHaveLength(1)
    const prunes = agent.session.events.filter(
      (event) => event.type === 'compaction/prune',
    ) as SessionEvent<'compaction/prune'>[]
    expect(prunes.map((event) => event.data.shadowedSeqs[0])).toEqual(plan.map((entry) => entry.seq))
    engine.assertClean()
  })

  it('replays an oversized result exactly at the end of the region unpruned, and prunes only after it', async () => {
    // Every result is over the pruner's budget, and region cuts fall only after tool results,
    // so the region's last node is an oversized result.
    const engine = await harness({
      engine: { auto: false },
      pruner: { thresholdChars: 1000, headChars: 880, tailChars: 60 },
      conversation: readSteps(21),
      resultChars: 1100,
    })
    const agent = await engine.ctx.agentLoop.create('edge', { ...ROUTE, reasoningEffort: 'max' })
    agent.followup('Read every file.')
    await agent.whenIdle()
    const routed = engine.conversation().at(-1)!
    const plan = engine.ctx.toolResultPruner.planSession(agent.session)
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).not.toBeNull()
    const end = result!.shadowedRange.end
    const atEnd = plan.find((entry) => entry.position === end)
    expect(atEnd, `a planned prune at the region's last position ${end}`).toBeDefined()

    const prunes = agent.session.events.filter(
      (event) => event.type === 'compaction/prune',
    ) as SessionEvent<'compaction/prune'>[]
    expect(prunes.map((event) => event.data.shadowedSeqs[0])).toEqual(
      plan.filter((entry) => entry.position > end).map((entry) => entry.seq),
    )
    expect(result!.shadowedSeqs).toContain(atEnd!.seq)

    const [summary] = engine.summaries()
    expect(summary!.messages).toHaveLength(end + 2)
    const last = summary!.messages[end]!
    expect(canonicalJson(promptView(last))).toBe(canonicalJson(promptView(routed.messages[end]!)))
    const block = last.content[0]!
    expect(block.type === 'tool-result' ? textOf(block.content) : '').toHaveLength(1100)
    expect(conversationBefore(engine, summary!)).toBe(routed)
    engine.assertClean()
  })
})
