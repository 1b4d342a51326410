import type { GenerateOptions, Message } from '@warmfold/llm'
import { LlmError, textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { afterEach, describe, expect, it } from 'vitest'
import type { BackgroundHost } from './background-fold-fixture.ts'
import {
  agentOf,
  backgroundHost,
  conversationRequests,
  expectEveryMessageKept,
  replayedRequest,
  startsOf,
  totalTokens,
} from './background-fold-fixture.ts'
import { filler } from './engine-fixture.ts'

const hosts: BackgroundHost[] = []
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.harness.dispose()
})

/** A user turn: one read step, then an answer; `fail.next` makes the next request fail for good (the turn ends in error). */
function conversation(fail: { next: boolean }) {
  return (request: GenerateOptions, index: number): ScriptedReply => {
    if (fail.next) {
      fail.next = false
      return { error: new LlmError('NETWORK', 'connection reset by the provider', { retryable: false }) }
    }
    return request.messages.at(-1)?.source.kind === 'tool'
      ? { content: `Done with step ${index}. ${filler(index, 40)}` }
      : {
          content: [
            textBlock(`Reading. ${filler(index, 60)}`),
            toolCallBlock(`call-${index}`, 'read', `{"path":"src/${index}.ts"}`),
          ],
        }
  }
}

describe('the region cap of a background fold past its snapshot', () => {
  it('holds the region inside the last answered request when more than the retained tail came after it', async () => {
    const fail = { next: false }
    // S = 0.5 × H = 3200 tokens; the retain budget is 1280 tokens, less the pace's growth in the snapshot.
    const host = await backgroundHost({ background: { startRatio: 0.5 }, conversation: conversation(fail) })
    hosts.push(host)
    const agent = await agentOf(host)
    const session = agent.session
    for (let turn = 0; totalTokens(host, session) < 2400; turn++) {
      agent.followup(`Read the next module (${turn}).`)
      await agent.whenIdle()
    }
    expect(startsOf(session)).toEqual([])
    const answered = conversationRequests(host).at(-1)!
    const finalAnswer = session.deriveMessages().at(-1) as Message
    expect(finalAnswer.role).toBe('assistant')
    // A turn whose request fails: its user message stays, and nothing answered it.
    fail.next = true
    agent.followup('A short note before the long one.')
    await agent.whenIdle()
    expect(session.events.findLast((event) => event.type === 'turn/end')?.data).toMatchObject({ reason: 'error' })
    expect(startsOf(session)).toEqual([])
    // The next user message alone is larger than the whole retain budget: it is the newest unit, the
    // retained tail, and three messages (the answer, the note, itself) follow the last answered request.
    agent.followup(`Here is the whole log: ${filler(99, 6000)}`)
    await agent.whenIdle()
    await host.engine.whenFoldsSettle(session)

    expect(startsOf(session).map((start) => start.trigger)).toEqual(['background'])
    const summary = host.harness.summaries()[0]!
    // Warm: the summary call replays the last answered request whole, its region a head of it.
    expect(replayedRequest(host, summary)).toBe(answered)
    const committed = session.events.find((event) => event.type === 'compaction/summary')!
    const { shadowedRange } = committed.data as { shadowedRange: { start: number; end: number } }
    expect(shadowedRange.end).toBeLessThan(answered.messages.length)
    // The answer after the snapshot was not folded: it is still on the surface, verbatim.
    expect(session.deriveMessages()).toContainEqual(finalAnswer)
    expectEveryMessageKept(session)
    host.harness.assertClean()
  })
})
