import type { GenerateOptions } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost } from './background-fold-fixture.ts'
import {
  agentOf,
  backgroundHost,
  conversationRequests,
  endsOf,
  startsOf,
  turnsUntil,
  until,
} from './background-fold-fixture.ts'
import { elements, oneToolStepPerTurn } from './engine-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

/** A host with `background.prewarm` set; a prewarm request is answered without using up a conversation reply. */
async function host(prewarm: boolean): Promise<BackgroundHost> {
  let calls = 0
  const created = await backgroundHost({
    background: { prewarm },
    conversation: (request, _index) =>
      request.purpose === 'prewarm' ? { content: 'ok' } : oneToolStepPerTurn(request, calls++),
  })
  hosts.push(created)
  return created
}

function prewarms(background: BackgroundHost): GenerateOptions[] {
  return background.harness.requests.filter((request) => request.purpose === 'prewarm')
}

/**
 * The prewarm wrote the prefix the next conversation request reads: same system, tools and
 * route, its messages a prefix of that request's, with the smallest output cap (no reasoning
 * reserve on the fixture's model: 1 token).
 */
function expectPrewarmed(background: BackgroundHost, prewarm: GenerateOptions, next: GenerateOptions): void {
  expect(prewarm).toMatchObject({
    provider: next.provider,
    model: next.model,
    reasoningEffort: next.reasoningEffort,
    maxTokens: 1,
    sessionId: next.sessionId,
  })
  const written = elements(prewarm)
  expect(written.length).toBeGreaterThan(2)
  expect(elements(next).slice(0, written.length)).toEqual(written)
  // It ends where a request may end: a user or tool message, never the model's own answer.
  expect(prewarm.messages.at(-1)?.role).not.toBe('assistant')
  // It was sent before that request.
  const requests = background.harness.requests
  expect(requests.indexOf(prewarm)).toBeLessThan(requests.indexOf(next))
}

describe('background.prewarm', () => {
  it.each([true, false])(
    'prewarm %s: a summary that lands while the agent is idle is swapped in, then the post-swap prefix is written (on) or not (off)',
    async (prewarm) => {
      const background = await host(prewarm)
      background.summaries.hold = true
      const agent = await agentOf(background)
      expect(await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)).toBe('done')
      const before = conversationRequests(background).length
      background.summaries.held[0]!.release()
      await background.engine.whenFoldsSettle(agent.session)
      expect(endsOf(agent.session)).toEqual([expect.not.objectContaining({ error: expect.anything() })])
      if (prewarm) await until(() => prewarms(background).length === 1, 'the prewarm request')
      agent.followup('Go on.')
      await agent.whenIdle()
      const next = conversationRequests(background)[before]!
      if (!prewarm) return expect(prewarms(background)).toEqual([])
      expect(prewarms(background)).toHaveLength(1)
      expectPrewarmed(background, prewarms(background)[0]!, next)
      // The swap had landed: the prewarm starts with the checkpoint, not the folded head.
      expect(JSON.stringify(prewarms(background)[0]!.messages[0])).toContain('Goal: fix the build.')
      background.harness.assertClean()
    },
  )

  it('a summary in hand while the turn runs: the projected post-swap prefix is written during the step, the swap at the next boundary reads it', async () => {
    const background = await host(true)
    background.summaries.hold = true
    const agent = await agentOf(background)
    expect(await turnsUntil(background, agent, () => startsOf(agent.session).length > 0)).toBe('done')
    // The summary arrives while the next turn's first request is answered (an awaited listener).
    let released = -1
    background.harness.ctx.on('llm/stream', async (request) => {
      if (request.purpose !== 'conversation' || released >= 0) return
      released = conversationRequests(background).length
      background.summaries.held.shift()?.release()
      await background.engine.whenFoldsSettle(agent.session)
    })
    agent.followup('Read one more file.')
    await agent.whenIdle()
    expect(endsOf(agent.session)).toEqual([expect.not.objectContaining({ error: expect.anything() })])
    expect(prewarms(background)).toHaveLength(1)
    const prewarmed = prewarms(background)[0]!
    // Sent during the step (before the request after the tool result), and that request, the
    // first after the swap, starts with exactly what the prewarm wrote.
    const after = conversationRequests(background)[released]!
    expect(JSON.stringify(prewarmed.messages[0])).toContain('Goal: fix the build.')
    expectPrewarmed(background, prewarmed, after)
    background.harness.assertClean()
  })
})
