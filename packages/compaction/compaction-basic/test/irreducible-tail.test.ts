import type { GenerateOptions } from '@warmfold/llm'
import { createUserMessage, textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { AnySessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { EngineHarness } from './engine-fixture.ts'
import { filler, mountEngine, ROUTE, stopAfter } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** Conversation replies: `toolSteps` tool calls per user turn, then an answer. */
function turnsOf(toolSteps: number): (request: GenerateOptions, index: number) => ScriptedReply {
  let inTurn = 0
  return (_request, index) => {
    if (inTurn === toolSteps) {
      inTurn = 0
      return { content: `Turn done at call ${index}.` }
    }
    inTurn += 1
    return {
      content: [
        textBlock(`Reading. ${filler(index, 60)}`),
        toolCallBlock(`call-${index}`, 'read', `{"path":"src/${index}.ts"}`),
      ],
    }
  }
}

/** Per user turn: the compaction events it logged, in order. */
function compactionsPerTurn(events: readonly AnySessionEvent[]): string[][] {
  const turns: string[][] = []
  for (const event of events) {
    if (event.type === 'turn/start') turns.push([])
    else if (event.type.startsWith('compaction/') && event.type !== 'compaction/prune')
      turns.at(-1)?.push(event.type.slice('compaction/'.length))
  }
  return turns
}

describe('an irreducible tail', () => {
  it('makes no summary call that cannot succeed and at most one failed attempt per user turn', async () => {
    // Five tool steps per turn; tool result 12 (about 7000 tokens) alone is above the 6400
    // threshold. Summaries go to a 32k model, so once the tail moved on it can be summarized.
    const engine = await mountEngine({
      engine: { summarizationProvider: 'scripted', summarizationModel: 'other' },
      conversation: turnsOf(5),
      resultChars: (step) => (step === 12 ? 28000 : 600),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('irreducible', { ...ROUTE })
    for (let turn = 0; turn < 8; turn++) {
      agent.followup(`turn ${turn}`)
      await agent.whenIdle()
    }
    const events = agent.session.events
    expect(
      events
        .filter((event) => event.type === 'turn/end')
        .every((event) => (event.data as { reason: string }).reason === 'stop'),
    ).toBe(true)
    const perTurn = compactionsPerTurn(events)
    const failures = perTurn.map((turn) => turn.filter((type) => type === 'failure').length)
    expect(failures.some((count) => count > 0)).toBe(true)
    expect(Math.max(...failures)).toBe(1)
    // Every summary call was made only when it could relieve the pressure, and committed: no
    // bracket ends in an error, and no failed attempt contains a summary call.
    const summaries = engine.summaries()
    expect(summaries.length).toBeGreaterThan(0)
    expect(events.filter((event) => event.type === 'compaction/start')).toHaveLength(summaries.length)
    expect(events.filter((event) => event.type === 'compaction/summary')).toHaveLength(summaries.length)
    for (const turn of perTurn) expect(turn.join(' ')).not.toMatch(/start summary end failure/)
    expect((events.find((event) => event.type === 'compaction/failure')!.data as { reason: string }).reason).toMatch(
      /^the retained tail is irreducible: summarizing positions 0\.\.\d+ \(about \d+ tokens\) would still leave about \d+ tokens, at or above the threshold$/,
    )
    // Once the tail moved on, a compaction relieved the pressure for good.
    expect(engine.ctx.tokenMeter.measure(agent.session).totalTokens).toBeLessThan(6400)
    engine.assertClean()
  })

  it('makes no summary call when the head cannot fit the summary target, and says so once per turn', async () => {
    // Summaries go to a 2400-token model; the first tool result (about 3000 tokens) cannot be replayed there.
    const engine = await mountEngine({
      engine: { summarizationProvider: 'scripted', summarizationModel: 'small' },
      conversation: turnsOf(5),
      resultChars: (step) => (step === 0 ? 12000 : 2400),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('unfit', { ...ROUTE })
    for (let turn = 0; turn < 3; turn++) {
      agent.followup(`turn ${turn}`)
      await agent.whenIdle()
    }
    const perTurn = compactionsPerTurn(agent.session.events)
    expect(engine.summaries()).toHaveLength(0)
    expect(perTurn.flat().filter((type) => type !== 'failure')).toEqual([])
    expect(perTurn.slice(1).map((turn) => turn.length)).toEqual([1, 1])
    const reasons = agent.session.events.flatMap((event) =>
      event.type === 'compaction/failure' ? [(event.data as { reason: string }).reason] : [],
    )
    // Only the first user message fits a summary call: folding it cannot relieve the pressure.
    expect(reasons[0]).toMatch(/^the retained tail is irreducible: summarizing positions 0\.\.0 \(about \d+ tokens\)/)
    engine.assertClean()
  })

  it('counts the user messages a fold keeps as staying: no summary call when they alone leave the request at the threshold', async () => {
    // A task of about 385 tokens (within the default budget of 400 at this window, so every fold
    // keeps it), two small reads, then a read of about 6,000 tokens that the tail must keep.
    const engine = await mountEngine({
      engineDefaults: true,
      engine: { auto: false, artifactTrail: { enabled: false } },
      conversation: stopAfter(3),
      resultChars: (step) => (step === 2 ? 24_000 : 2000),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('kept-task', { ...ROUTE })
    agent.followup(createUserMessage(`Task: ${filler(5, 1500)}`))
    await agent.whenIdle()
    expect(engine.ctx.tokenMeter.measure(agent.session).totalTokens).toBeGreaterThanOrEqual(6400)
    // Folding the head but the kept task leaves the task, an empty checkpoint and the tail: at or
    // above the 6400-token threshold, so the call could not relieve the pressure and is not made.
    expect(await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull()
    expect(engine.summaries()).toHaveLength(0)
    const failure = agent.session.events.find((event) => event.type === 'compaction/failure')
    expect((failure?.data as { reason: string } | undefined)?.reason).toMatch(
      /^the retained tail is irreducible: summarizing positions 0\.\.4 \(about \d+ tokens, \d+ of them pinned or kept\) would still leave about \d+ tokens, at or above the threshold$/,
    )
    engine.assertClean()
  })
})
