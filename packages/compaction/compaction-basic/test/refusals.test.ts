import { isCheckpointMessage } from '@warmfold/compaction'
import type { GenerateOptions } from '@warmfold/llm'
import { createUserMessage, reasoningBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { Session, SessionEvent } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@warmfold/agent-loop'
import type { EngineHarness } from './engine-fixture.ts'
import { elements, growUntil, mountEngine, oneToolStepPerTurn, ROUTE, SUMMARY } from './engine-fixture.ts'

const harnesses: EngineHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** A session above the threshold (auto off), ready for a direct compactIfNeeded. */
async function pressured(
  summary: (request: GenerateOptions, index: number) => ScriptedReply | Promise<ScriptedReply>,
): Promise<{ engine: EngineHarness; agent: Agent }> {
  const engine = await mountEngine({ engine: { auto: false }, conversation: oneToolStepPerTurn, summary })
  harnesses.push(engine)
  const agent = await engine.ctx.agentLoop.create('refusals', { ...ROUTE, reasoningEffort: 'max' })
  await growUntil(agent, () => engine.ctx.tokenMeter.measure(agent.session).totalTokens >= 6400)
  return { engine, agent }
}

function compactionEnds(session: Session): Array<SessionEvent<'compaction/end'>['data']> {
  return session.events
    .filter((event) => event.type === 'compaction/end')
    .map((event) => event.data as SessionEvent<'compaction/end'>['data'])
}

function checkpoints(session: Session): number {
  return session.events.filter(
    (event) => event.type === 'user/message' && isCheckpointMessage((event.data as { message: never }).message),
  ).length
}

describe('summary refusals leave no checkpoint and a readable compaction/end.error', () => {
  const cases: Array<[string, (request: GenerateOptions, index: number) => ScriptedReply, RegExp]> = [
    [
      'a summary truncated at maxTokens',
      () => ({ content: 'Goal: half a checkp', finishReason: 'max-tokens' }),
      /summary truncated at maxTokens \d+/,
    ],
    ['a summary with no text', () => ({ content: [reasoningBlock('thinking only')] }), /summary call returned no text/],
    ['a tool call twice', () => ({ content: [toolCallBlock('x', 'read', '{}')] }), /answered with a tool call twice/],
    [
      'a checkpoint not smaller than the region',
      () => ({ content: 'word '.repeat(40000) }),
      /checkpoint \(\d+ tokens\) is not smaller than what it replaces \(\d+ tokens\)/,
    ],
    ['a failed summary call', () => ({ error: new Error('socket hang up') }), /summary call failed: socket hang up/],
  ]

  it.each(cases)('refuses %s', async (_name, reply, message) => {
    const { engine, agent } = await pressured(reply)
    const before = agent.session.deriveMessages()
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).toBeNull()
    const ends = compactionEnds(agent.session)
    expect(ends).toHaveLength(1)
    expect(ends[0]!.error).toMatch(message)
    expect(checkpoints(agent.session)).toBe(0)
    expect(agent.session.deriveMessages()).toEqual(before)
    expect(agent.session.events.at(-1)?.type).toBe('compaction/failure')
    engine.assertClean()
  })

  it('retries a tool-call answer once with the very same request, then commits', async () => {
    const { engine, agent } = await pressured((_request, index) =>
      index === 0 ? { content: [toolCallBlock('x', 'read', '{}')] } : { content: SUMMARY },
    )
    const result = await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')
    expect(result).not.toBeNull()
    const [first, second] = engine.summaries()
    expect(elements(second!)).toEqual(elements(first!))
    expect([second!.reasoningEffort, second!.maxTokens]).toEqual([first!.reasoningEffort, first!.maxTokens])
    expect(checkpoints(agent.session)).toBe(1)
    engine.assertClean()
  })

  it('refuses when the surface changed while summarizing', async () => {
    let session: Session | undefined
    const { engine, agent } = await pressured(() => {
      session!.append('user/message', { message: createUserMessage('sneaked in') }, 'append')
      return { content: SUMMARY }
    })
    session = agent.session
    expect(await engine.ctx.compaction.compactIfNeeded(agent, 'pressure')).toBeNull()
    expect(compactionEnds(agent.session)[0]!.error).toMatch(/surface changed while summarizing/)
    expect(checkpoints(agent.session)).toBe(0)
    engine.assertClean()
  })

  it('stops at once when the summary call is aborted, and ends the bracket', async () => {
    let started!: () => void
    const inFlight = new Promise<void>((resolve) => (started = resolve))
    const { engine, agent } = await pressured(() => {
      started()
      return new Promise<ScriptedReply>(() => {})
    })
    const controller = new AbortController()
    const running = engine.ctx.compaction.compactIfNeeded(agent, 'pressure', controller.signal)
    await inFlight
    controller.abort(new Error('user pressed stop'))
    expect(await running).toBeNull()
    expect(compactionEnds(agent.session)[0]!.error).toMatch(/summary call aborted: user pressed stop/)
    expect(agent.session.events.at(-1)?.type).toBe('compaction/end')
    expect(checkpoints(agent.session)).toBe(0)
    engine.assertClean()
  })

  it('runs one of two concurrent compactions of a session', async () => {
    const { engine, agent } = await pressured(() => ({ content: SUMMARY }))
    const [first, second] = await Promise.all([
      engine.ctx.compaction.compactIfNeeded(agent, 'pressure'),
      engine.ctx.compaction.compactIfNeeded(agent, 'pressure'),
    ])
    expect([first, second].filter((result) => result !== null)).toHaveLength(1)
    expect(engine.summaries()).toHaveLength(1)
    engine.assertClean()
  })
})

describe('back-off', () => {
  it('an irreducible tail does not trigger a compaction on every step', async () => {
    const engine = await mountEngine({
      conversation: oneToolStepPerTurn,
      // One giant result (about 7000 tokens) makes the newest unit alone exceed the threshold.
      resultChars: (step) => (step === 6 ? 28000 : 600),
    })
    harnesses.push(engine)
    const agent = await engine.ctx.agentLoop.create('backoff', { ...ROUTE })
    for (let turn = 0; turn < 12; turn++) {
      agent.followup(`turn ${turn}`)
      await agent.whenIdle()
    }
    const events = agent.session.events
    const failures = events.filter((event) => event.type === 'compaction/failure')
    const preSteps = events.filter((event) => event.type === 'assistant/message').length
    expect(failures.length).toBeGreaterThan(0)
    const firstFailure = failures[0]!.seq
    const stepsAfter = events.filter((event) => event.type === 'assistant/message' && event.seq > firstFailure).length
    const attemptsAfter = events.filter(
      (event) => (event.type === 'compaction/start' || event.type === 'compaction/failure') && event.seq > firstFailure,
    ).length
    expect(stepsAfter).toBeGreaterThanOrEqual(8)
    expect(attemptsAfter).toBeLessThan(stepsAfter / 2)
    expect(preSteps).toBeGreaterThan(0)
    expect((failures[0]!.data as { reason: string }).reason).toMatch(/above the threshold|no balanced head region/)
    engine.assertClean()
  })
})
