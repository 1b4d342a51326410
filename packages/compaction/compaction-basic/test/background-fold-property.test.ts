import type { GenerateOptions } from '@warmfold/llm'
import { LlmError } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { BackgroundHost } from './background-fold-fixture.ts'
import {
  agentOf,
  appendedMessages,
  backgroundHost,
  endsOf,
  expectEveryMessageKept,
  openFolds,
  until,
} from './background-fold-fixture.ts'
import { SUMMARY, WINDOW } from './engine-fixture.ts'

/** One step of a random interleaving. */
type Action =
  /** A user turn whose one tool call returns `chars` characters. */
  | { readonly kind: 'turn'; readonly chars: number }
  /** A user turn whose tool returns a huge result (about 2,300 tokens, almost twice the retain budget). */
  | { readonly kind: 'huge' }
  /** From now on, background summary calls are slow: held until released. */
  | { readonly kind: 'hold' }
  /** The held calls answer (a summary, or a provider failure). */
  | { readonly kind: 'release'; readonly fail: boolean }
  /** The tools change: the route's envelope differs from the snapshot's. */
  | { readonly kind: 'route' }
  /** The session is closed and a new agent opens it again. */
  | { readonly kind: 'close' }

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('turn' as const), chars: fc.integer({ min: 200, max: 3000 }) }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'huge' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'hold' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('release' as const), fail: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'route' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'close' as const }) },
)

const USAGE = { inputTokens: 380, cacheReadTokens: 2000, outputTokens: 200 }

/** Summary calls the log records (on `compaction/summary`, or on a `compaction/end` without a checkpoint). */
function loggedCalls(session: Session): number {
  return session.events.reduce((sum, event) => {
    if (event.type === 'compaction/summary')
      return sum + ((event.data as { attempts?: unknown[] }).attempts?.length ?? 0)
    if (event.type === 'compaction/end' && (event.data as { error?: string }).error !== undefined)
      return sum + ((event.data as { attempts?: unknown[] }).attempts?.length ?? 0)
    return sum
  }, 0)
}

/** Prompt tokens of a request as the token meter estimates them. */
function promptTokens(host: BackgroundHost, request: GenerateOptions): number {
  const meter = host.harness.ctx.tokenMeter
  return (
    meter.estimateSystem(request.system) +
    meter.estimateTools(request.tools ?? []) +
    request.messages.reduce((sum, message) => sum + meter.estimateMessage(message), 0)
  )
}

async function run(actions: readonly Action[], startRatio: number | 'adaptive'): Promise<void> {
  const host = await backgroundHost({ background: { startRatio } })
  const { harness, summaries, clock } = host
  try {
    // Invariant: never two folds in flight on a session.
    const violations: string[] = []
    harness.ctx.on('session/event', (session, event) => {
      if (event.type === 'compaction/start' && openFolds(session) > 1)
        violations.push(`two folds in flight at seq ${event.seq}`)
    })
    // Invariant: never a request over the window (its prompt and its output cap).
    harness.ctx.on('llm/stream', (request) => {
      const tokens = promptTokens(host, request) + (request.maxTokens ?? 500)
      if (tokens > WINDOW)
        violations.push(
          `a ${request.purpose} request of ${tokens} tokens (prompt + maxTokens) is over the ${WINDOW}-token window`,
        )
    })
    let agent = await agentOf(host)
    const sent: string[] = []
    let tools = 0
    const turn = async (chars: number) => {
      host.results.push(chars)
      const text = `Turn ${sent.length}: go on.`
      sent.push(text)
      agent.followup(text)
      let idle = false
      void agent.whenIdle().then(() => (idle = true))
      for (;;) {
        await until(() => idle || clock.pending().length > 0, 'the turn ending or waiting at H')
        if (idle) return
        // Waiting at H for a held fold: it answers.
        summaries.hold = false
        for (const held of summaries.held.splice(0)) held.release({ content: SUMMARY, usage: USAGE })
        await until(() => idle || clock.pending().length === 0, 'the wait at H ending')
      }
    }
    for (let warmup = 0; warmup < 7; warmup++) await turn(1200)
    for (const step of actions) {
      if (step.kind === 'turn') await turn(step.chars)
      else if (step.kind === 'huge') await turn(9000)
      else if (step.kind === 'hold') summaries.hold = true
      else if (step.kind === 'release') {
        summaries.hold = false
        const reply = step.fail
          ? { error: new LlmError('NETWORK', 'connection reset by the provider', { retryable: false }) }
          : { content: SUMMARY, usage: USAGE }
        for (const held of summaries.held.splice(0)) held.release(reply)
        await host.engine.whenFoldsSettle(agent.session)
      } else if (step.kind === 'route') {
        harness.ctx.tools.register({
          name: `tool-${tools++}`,
          description: 'Another tool',
          parameters: { type: 'object' },
          execute: () => 'ok',
        })
      } else {
        await harness.ctx.sessions.close(agent.session)
        agent = await agentOf(host)
      }
      const session = agent.session
      expect(violations).toEqual([])
      expect(openFolds(session)).toBeLessThanOrEqual(1)
      // Never a lost, duplicated or reordered message.
      expectEveryMessageKept(session)
      const users = appendedMessages(session).flatMap(({ message }) =>
        message.role === 'user' && message.source?.kind === 'user' ? [message.content] : [],
      )
      expect(users).toEqual(sent.map((text) => [{ type: 'text', text }]))
    }
    // Every call lands on the log: let the held ones answer, then close the session.
    summaries.hold = false
    for (const held of summaries.held.splice(0)) held.release({ content: SUMMARY, usage: USAGE })
    await host.engine.whenFoldsSettle(agent.session)
    await harness.ctx.sessions.close(agent.session)
    const session = agent.session
    expect(openFolds(session)).toBe(0)
    // Every discarded fold is on the log with its calls, and every call made is on the log (its cost counted).
    for (const end of endsOf(session).filter((end) => end.discarded)) expect(end.attempts?.length).toBeGreaterThan(0)
    expect(loggedCalls(session)).toBe(harness.summaries().length)
    expect(violations).toEqual([])
    harness.assertClean()
  } finally {
    await harness.dispose()
  }
}

describe('background folds over random interleavings of turns, tool results, slow and failing summaries, route changes and closes', () => {
  it('never lose, duplicate or reorder a message, never run two folds, never send a request over the window, and log every call', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 8, maxLength: 20 }),
        fc.constantFrom<number | 'adaptive'>(0.5, 0.8, 'adaptive'),
        (actions, startRatio) => run(actions, startRatio),
      ),
      { numRuns: 10 },
    )
  }, 60_000)
})
