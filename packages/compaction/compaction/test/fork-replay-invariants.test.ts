import type { Message } from '@warmfold/llm'
import { createMessage, createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { checkCompactionEvent, checkpointSource, compactionAfterSource, CompactionInvariants } from '../src/index.ts'

const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) {
    await context.dispose()
    context.assertClean()
  }
})

async function sessionUnderChecker(id: string): Promise<Session> {
  const context = await createTestContext()
  contexts.push(context)
  context.ctx.plugin(SessionStore, {})
  context.ctx.plugin(CompactionInvariants)
  return context.ctx.sessions.create(id)
}

// A folded parent's request: its checkpoint, a message a compaction/after listener added, the user's next message.
const CHECKPOINT = createMessage({
  role: 'user',
  content: '<summary>Goal: fix it.</summary>',
  source: checkpointSource('c1'),
})
const AFTER = createMessage({ role: 'user', content: 'Re-read AGENTS.md.', source: compactionAfterSource('c1') })
const REPLAYED: Message[] = [CHECKPOINT, AFTER, createUserMessage('now the tests')]

function forkEvent(session: Session): void {
  session.append('agent/fork', {
    parentSessionId: 'parent',
    parentSeq: 7,
    header: { config: { provider: 'p', model: 'm' } },
    cacheSessionId: 'parent',
  })
}

function replay(session: Session, messages: readonly Message[]): void {
  for (const message of messages) session.append('user/message', { message }, 'append')
}

describe("CompactionInvariants and a fork's replayed history", () => {
  it("accepts a folded parent's checkpoint and compaction/after message replayed right after a fork's agent/fork event", async () => {
    const session = await sessionUnderChecker('parent.fork-1')
    session.unit(() => {
      forkEvent(session)
      replay(session, REPLAYED)
    })
    expect(session.deriveMessages()).toEqual(REPLAYED)
  })

  it("still rejects a checkpoint once the fork's replay has ended (its turn started), or in a session that is no fork", async () => {
    const fork = await sessionUnderChecker('parent.fork-1')
    fork.unit(() => {
      forkEvent(fork)
      replay(fork, [createUserMessage('first')])
    })
    fork.append('turn/start', { turn: 1 })
    expect(() => replay(fork, [CHECKPOINT])).toThrow(
      'compaction invariant: user/message at seq 3 rejected: a checkpoint message must come immediately after its ' +
        'compaction/summary',
    )
    const plain = await sessionUnderChecker('plain')
    expect(() => plain.unit(() => replay(plain, [createUserMessage('hi'), AFTER]))).toThrow(
      'compaction invariant: user/message at seq 1 rejected: a compaction/after message must be appended inside the ' +
        'bracket of its compaction c1, but no compaction is open',
    )
  })

  it('is the same rule in the pure fold: a stored fork log folds without a throw', () => {
    const events = [
      { seq: 0, type: 'agent/fork', data: {} },
      ...REPLAYED.map((message, index) => ({
        seq: index + 1,
        type: 'user/message',
        data: { message },
        surface: { op: 'append' as const },
      })),
    ]
    const state = events.reduce<ReturnType<typeof checkCompactionEvent>>(
      (folded, event) => checkCompactionEvent(folded, event),
      {},
    )
    expect(state.open).toBeUndefined()
    const turn = { seq: 4, type: 'turn/start', data: { turn: 1 } }
    const after = checkCompactionEvent(state, turn)
    expect(() => checkCompactionEvent(after, { ...events[1]!, seq: 5 })).toThrow(
      'a checkpoint message must come immediately after its compaction/summary',
    )
  })
})
