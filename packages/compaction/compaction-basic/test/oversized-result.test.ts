import type { PruneDecisionData } from '@warmfold/compaction'
import { PRUNE_MARKER } from '@warmfold/compaction-tool-result-pruner'
import type { GenerateOptions, ToolResultMessage } from '@warmfold/llm'
import { LlmError, textBlock, textOf, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { filler, mountEngine, ROUTE, WINDOW } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** Tokens of a request's prompt as the engine's meter prices it. */
function promptTokens(harness: EngineHarness, request: GenerateOptions): number {
  const meter = harness.ctx.tokenMeter
  return (
    meter.estimateSystem(request.system) +
    meter.estimateTools(request.tools) +
    request.messages.reduce((sum, message) => sum + meter.estimateMessage(message), 0)
  )
}

/**
 * A provider with an 8000-token window: a prompt over it is rejected with
 * CONTEXT_WINDOW_EXCEEDED. Each turn is `steps` tool calls, then an answer.
 */
function windowedTurns(harness: () => EngineHarness, steps: number) {
  let inTurn = 0
  return (request: GenerateOptions, index: number): ScriptedReply => {
    const size = promptTokens(harness(), request)
    if (size > WINDOW)
      return { error: new LlmError('CONTEXT_WINDOW_EXCEEDED', `prompt is ${size} tokens, the window is ${WINDOW}`) }
    if (inTurn === steps) {
      inTurn = 0
      return { content: `Turn done at call ${index}.` }
    }
    inTurn += 1
    return {
      content: [textBlock(`Reading. ${filler(index, 60)}`), toolCallBlock(`call-${index}`, 'read', '{}')],
    }
  }
}

/** Tool result 4 is 48,000 characters (about 12,000 tokens): more than the whole 8000-token window. */
const HUGE_STEP = 4
const HUGE_CHARS = 48_000

async function hostWithoutPruner(options: EngineHarnessOptions = {}): Promise<EngineHarness> {
  let harness: EngineHarness | undefined
  harness = await mountEngine({
    conversation: windowedTurns(() => harness as EngineHarness, 3),
    resultChars: (step) => (step === HUGE_STEP ? HUGE_CHARS : 600),
    ...options,
  })
  harnesses.push(harness)
  return harness
}

function turnEnds(events: readonly SessionEvent[]): string[] {
  return events.filter((event) => event.type === 'turn/end').map((event) => (event.data as { reason: string }).reason)
}

function hugeResult(events: readonly SessionEvent[]): SessionEvent<'tool/result'> {
  const found = events.find(
    (event) =>
      event.type === 'tool/result' &&
      textOf((event.data as { message: ToolResultMessage }).message.content[0].content).length === HUGE_CHARS,
  )
  if (!found) throw new Error('the oversized tool result is not in the log')
  return found as SessionEvent<'tool/result'>
}

describe('a tool result larger than the whole window, without the pruner', () => {
  it('is cut to head + marker + tail before the next request, so that turn and every later one go on', async () => {
    const engine = await hostWithoutPruner()
    const agent = await engine.ctx.agentLoop.create('oversized', { ...ROUTE })
    for (let turn = 0; turn < 5; turn++) {
      agent.followup(`turn ${turn}`)
      await agent.whenIdle()
    }
    const events = agent.session.events
    expect(turnEnds(events)).toEqual(['stop', 'stop', 'stop', 'stop', 'stop'])
    // No request the provider saw was over its window.
    for (const request of engine.conversation()) expect(promptTokens(engine, request)).toBeLessThanOrEqual(WINDOW)

    // The original stays in the log; a pricing event and a content-only replacement shadow it.
    const original = hugeResult(events)
    const prunes = events.filter((event) => event.type === 'compaction/prune') as SessionEvent<'compaction/prune'>[]
    expect(prunes.map((event) => event.data.shadowedSeqs)).toEqual([[original.seq]])
    const replacement = events[prunes[0]!.seq + 1] as SessionEvent<'tool/result'>
    expect(replacement.type).toBe('tool/result')
    const text = textOf(replacement.data.message.content[0].content)
    expect(text).toContain(PRUNE_MARKER)
    expect(text.startsWith(textOf(original.data.message.content[0].content).slice(0, 100))).toBe(true)
    expect(replacement.data.message.content[0].toolCallId).toBe(original.data.message.content[0].toolCallId)

    // The decision says why, before the rewrite.
    const decisions = events.filter((event) => event.type === 'compaction/prune-decision')
    expect(decisions).toHaveLength(1)
    expect(decisions[0]!.seq).toBeLessThan(prunes[0]!.seq)
    const decision = decisions[0]!.data as PruneDecisionData
    expect(decision).toMatchObject({ action: 'prune', results: 1 })
    expect(decision.reason).toMatch(
      new RegExp(
        `^a tool result of about \\d+ tokens \\(seq ${original.seq}\\) is larger than any request to scripted/main ` +
          `can hold \\(\\d+ tokens: the ${WINDOW}-token window less the output reserve and the system prompt and ` +
          'tools\\), so it is cut to its head and tail \\(about \\d+ tokens\\)$',
      ),
    )
    engine.assertClean()
  })

  it('is cut by the overflow recovery too, when a host folds only on demand', async () => {
    const engine = await hostWithoutPruner({ engine: { auto: false } })
    const agent = await engine.ctx.agentLoop.create('oversized-manual', { ...ROUTE })
    agent.followup('turn 0')
    await agent.whenIdle()
    agent.followup('turn 1')
    await agent.whenIdle()
    // The huge result arrived in turn 1; its next request was rejected.
    expect(turnEnds(agent.session.events)).toEqual(['stop', 'error'])
    await engine.ctx.compaction.compactIfNeeded(agent, 'context-overflow')
    agent.followup('turn 2')
    await agent.whenIdle()
    expect(turnEnds(agent.session.events)).toEqual(['stop', 'error', 'stop'])
    const prunes = agent.session.events.filter((event) => event.type === 'compaction/prune')
    expect(prunes.map((event) => (event.data as { shadowedSeqs: number[] }).shadowedSeqs)).toEqual([
      [hugeResult(agent.session.events).seq],
    ])
    engine.assertClean()
  })

  it('leaves a result that a request can still carry alone (above the threshold, below the window) verbatim', async () => {
    // About 7000 tokens: above the 6400-token threshold, within what a request holds.
    const engine = await hostWithoutPruner({ resultChars: (step) => (step === HUGE_STEP ? 28_000 : 600) })
    const agent = await engine.ctx.agentLoop.create('large', { ...ROUTE })
    for (let turn = 0; turn < 3; turn++) {
      agent.followup(`turn ${turn}`)
      await agent.whenIdle()
    }
    expect(agent.session.events.some((event) => event.type === 'compaction/prune')).toBe(false)
    engine.assertClean()
  })
})
