import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { Session, SessionStore } from '@warmfold/session'
import { createTestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { checkpointSource, pinMessage, pinnedSeqs, unpinMessage } from '../src/index.ts'
import { isPinned } from '../src/pin-message.ts'

const ROUTE = { provider: 'p', model: 'm' }

/** 0 rules (user), 1 assistant calling `call-1`, 2 its result, 3 user. */
function seeded(session = new Session('pins')): Session {
  session.append('user/message', { message: createUserMessage('Project rules: run the tests.', 'rules') }, 'append')
  session.append(
    'assistant/message',
    { message: createAssistantMessage([toolCallBlock('call-1', 'read', '{"path":"plan.md"}')], ROUTE, 'a1') },
    'append',
  )
  session.append('tool/result', { message: createToolResultMessage('call-1', 'The plan.', { id: 'r2' }) }, 'append')
  session.append('user/message', { message: createUserMessage('Go on.', 'u3') }, 'append')
  return session
}

describe('pinMessage / unpinMessage / pinnedSeqs', () => {
  it('pins by seq or by message, logs compaction/pin once, and unpins', () => {
    const session = seeded()
    expect(pinnedSeqs(session).size).toBe(0)
    const first = pinMessage(session, { id: 'rules' })
    expect(first).toMatchObject({ seq: 4, type: 'compaction/pin', data: { seq: 0 } })
    expect(first?.surface).toBeUndefined()
    expect(pinMessage(session, 2)?.data).toEqual({ seq: 2 })
    // Pinning twice writes nothing.
    expect(pinMessage(session, 0)).toBeUndefined()
    expect([...pinnedSeqs(session)]).toEqual([0, 2])
    expect(isPinned(session, 2)).toBe(true)
    expect(unpinMessage(session, 2)?.data).toEqual({ seq: 2 })
    expect(unpinMessage(session, 2)).toBeUndefined()
    expect([...pinnedSeqs(session)]).toEqual([0])
    expect(session.events.map((event) => event.type).slice(4)).toEqual([
      'compaction/pin',
      'compaction/pin',
      'compaction/unpin',
    ])
    // Log-only: the surface and the messages are unchanged.
    expect(session.surface.nodes).toEqual([0, 1, 2, 3])
  })

  it.each([
    [
      'a seq that is not on the surface',
      (session: Session) => pinMessage(session, 9),
      /pinMessage: seq 9 is not a surface node of session pins/,
    ],
    [
      'a log-only event',
      (session: Session) => (
        session.append('compaction/failure', { trigger: 'pressure', reason: 'x', totalTokens: 1, thresholdTokens: 1 }),
        pinMessage(session, 4)
      ),
      /seq 4 is not a surface node/,
    ],
    [
      'a message that is not on the surface',
      (session: Session) => pinMessage(session, { id: 'nope' }),
      /no message with id "nope" is on the surface of session pins/,
    ],
    [
      'a target without an id',
      (session: Session) => pinMessage(session, {} as never),
      /must be a surface seq or a message with a string id/,
    ],
    [
      'a checkpoint',
      (session: Session) => {
        session.append(
          'user/message',
          { message: createMessage({ role: 'user', content: 'summary', source: checkpointSource('c1') }) },
          { op: 'replace', start: 0, end: 1, sourceEventSeqs: [0, 1] },
        )
        return pinMessage(session, 4)
      },
      /seq 4 of session pins is a compaction checkpoint/,
    ],
    [
      'an unpin of a seq outside the log',
      (session: Session) => unpinMessage(session, 40),
      /unpinMessage: seq 40 is not in session pins, which has 4 events/,
    ],
  ])('refuses %s, naming it', (_name, act, message) => {
    const session = seeded()
    expect(() => act(session)).toThrow(message)
    expect(session.events.some((event) => event.type === 'compaction/pin')).toBe(false)
  })

  it('reads the pins from the log, so a reopened session has the same pins', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-pins-'))
    try {
      const writer = await createTestContext()
      writer.ctx.plugin(SessionStore, { store: 'file', directory })
      const session = seeded(await writer.ctx.sessions.create('pinned'))
      pinMessage(session, 0)
      pinMessage(session, 2)
      unpinMessage(session, 0)
      pinMessage(session, 3)
      session.append('assistant/message', { message: createAssistantMessage([textBlock('ok')], ROUTE) }, 'append')
      await writer.ctx.sessions.flush(session)
      await writer.dispose()
      writer.assertClean()

      const reader = await createTestContext()
      reader.ctx.plugin(SessionStore, { store: 'file', directory })
      const reopened = await reader.ctx.sessions.open('pinned')
      expect([...pinnedSeqs(reopened)]).toEqual([2, 3])
      await reader.dispose()
      reader.assertClean()
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })
})
