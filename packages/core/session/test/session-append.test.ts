import {
  canonicalJson,
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
} from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { Session, SessionError } from '../src/index.ts'

function seeded(): Session {
  const session = new Session('s1', { now: () => 1000 })
  session.append('user/message', { message: createUserMessage('hello', 'u0') }, 'append')
  session.append(
    'assistant/message',
    { message: createAssistantMessage([textBlock('hi')], { provider: 'p', model: 'm' }, 'a0') },
    'append',
  )
  session.append('user/message', { message: createUserMessage('more', 'u1') }, 'append')
  return session
}

function snapshot(session: Session) {
  return {
    length: session.length,
    surface: canonicalJson(session.surface),
    messages: canonicalJson(session.deriveMessages()),
  }
}

describe('Session.append', () => {
  it('logs frozen events with consecutive seqs and grows the surface', () => {
    const session = seeded()
    expect(session.events.map((event) => event.seq)).toEqual([0, 1, 2])
    expect(session.surface.nodes).toEqual([0, 1, 2])
    expect(Object.isFrozen(session.events[0])).toBe(true)
    expect(Object.isFrozen(session.events[0]!.data)).toBe(true)
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['u0', 'a0', 'u1'])
  })

  it('replaces a run of surface nodes with one node and keeps the originals in the log', () => {
    const session = seeded()
    const event = session.append(
      'user/message',
      { message: createUserMessage('summary', 'c0') },
      { op: 'replace', start: 0, end: 1, sourceEventSeqs: [0, 1] },
    )
    expect(session.surface.nodes).toEqual([event.seq, 2])
    expect(session.surface.replaceGeneration).toBe(1)
    expect(session.eventAt(0)?.type).toBe('user/message')
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['c0', 'u1'])
  })

  it('keeps the listed nodes of a replaced run, unchanged and in order, right after the new node', () => {
    const session = seeded()
    const kept = session.deriveMessages()[1]
    const event = session.append(
      'user/message',
      { message: createUserMessage('summary', 'c0') },
      { op: 'replace', start: 0, end: 2, sourceEventSeqs: [0, 2], keep: [1] },
    )
    expect(event.surface).toEqual({ op: 'replace', start: 0, end: 2, sourceEventSeqs: [0, 2], keep: [1] })
    expect(session.surface.nodes).toEqual([event.seq, 1])
    expect(session.deriveMessages().map((message) => message.id)).toEqual(['c0', 'a0'])
    // The kept node is the very same event and message: nothing was copied or rewritten.
    expect(session.deriveMessages()[1]).toBe(kept)
    // A later replace can keep it again, and an empty keep is stored as no keep at all.
    session.append('user/message', { message: createUserMessage('next', 'u2') }, 'append')
    const again = session.append(
      'user/message',
      { message: createUserMessage('summary 2', 'c1') },
      { op: 'replace', start: 0, end: 2, sourceEventSeqs: [event.seq, 4], keep: [1] },
    )
    expect(session.surface.nodes).toEqual([again.seq, 1])
    const plain = session.append(
      'user/message',
      { message: createUserMessage('summary 3', 'c2') },
      { op: 'replace', start: 0, end: 0, sourceEventSeqs: [again.seq], keep: [] },
    )
    expect(plain.surface).toEqual({ op: 'replace', start: 0, end: 0, sourceEventSeqs: [again.seq] })
    expect(session.surface.replaceGeneration).toBe(3)
  })

  const invalid: Array<[string, (session: Session) => void, RegExp]> = [
    [
      'a keep that is not a list of seqs',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 0, end: 1, sourceEventSeqs: [0, 1], keep: 'all' as never },
        ),
      /keep must be an array of event seqs, got "all"/,
    ],
    [
      'a keep outside the run',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 0, end: 1, sourceEventSeqs: [0, 1], keep: [2] },
        ),
      /keep lists seq 2, which is not a surface node at positions 0\.\.1/,
    ],
    [
      'a keep out of surface order',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 0, end: 2, sourceEventSeqs: [0, 1, 2], keep: [1, 0] },
        ),
      /in surface order; seq 0 is out of order/,
    ],
    [
      'a keep listing a seq twice',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 0, end: 2, sourceEventSeqs: [0, 1, 2], keep: [1, 1] },
        ),
      /once each/,
    ],
    [
      'a keep of the whole run',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 0, end: 1, sourceEventSeqs: [], keep: [0, 1] },
        ),
      /keeps every node of the run; it must shadow at least one/,
    ],
    [
      'a keep that leaves a shadowed seq uncited',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 0, end: 2, sourceEventSeqs: [0], keep: [1] },
        ),
      /missing 2/,
    ],
    [
      'a surface event without an intent',
      (session) => (session.append as Function)('user/message', { message: createUserMessage('x') }),
      /needs a surface intent/,
    ],
    [
      'a non-surface event with an intent',
      (session) =>
        (session.append as Function)(
          'request/header',
          { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' },
          'append',
        ),
      /must not carry a surface intent/,
    ],
    [
      'an unknown intent',
      (session) => session.append('user/message', { message: createUserMessage('x') }, 'prepend' as never),
      /must be 'append' or/,
    ],
    [
      'a replace past the end',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 2, end: 3, sourceEventSeqs: [2, 3] },
        ),
      /not a run of current surface positions/,
    ],
    [
      'a reversed replace',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 1, end: 0, sourceEventSeqs: [0, 1] },
        ),
      /not a run/,
    ],
    [
      'a replace that does not cite a shadowed seq',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 0, end: 1, sourceEventSeqs: [0] },
        ),
      /missing 1/,
    ],
    [
      'a replace citing a seq outside the log',
      (session) =>
        session.append(
          'user/message',
          { message: createUserMessage('x') },
          { op: 'replace', start: 0, end: 0, sourceEventSeqs: [0, 99] },
        ),
      /seq 99/,
    ],
    [
      'a tool result logged as user/message',
      (session) => session.append('user/message', { message: createToolResultMessage('c', 'r') }, 'append'),
      /must not hold a tool-result/,
    ],
    [
      'a user message logged as tool/result',
      (session) => session.append('tool/result', { message: createUserMessage('x') as never }, 'append'),
      /exactly one tool-result/,
    ],
    [
      'an assistant role on user/message',
      (session) =>
        session.append(
          'user/message',
          { message: createAssistantMessage([textBlock('x')], { provider: 'p', model: 'm' }) },
          'append',
        ),
      /role must be "user"/,
    ],
    [
      'data that is not plain JSON',
      (session) =>
        session.append(
          'user/message',
          { message: { ...createUserMessage('x'), when: new Date(0) } as never },
          'append',
        ),
      /not plain JSON.*Date/,
    ],
    [
      'a non-finite number',
      (session) =>
        session.append('request/header', {
          header: { config: { provider: 'p', model: 'm', temperature: Number.NaN } },
          reason: 'initial',
        }),
      /not plain JSON.*NaN/,
    ],
    ['an empty type', (session) => (session.append as Function)('', {}), /non-empty string/],
  ]

  it.each(invalid)('rejects %s and leaves the log untouched', (_name, act, message) => {
    const session = seeded()
    const before = snapshot(session)
    let thrown: unknown
    try {
      act(session)
    } catch (error) {
      thrown = error
    }
    expect(SessionError.isInstance(thrown)).toBe(true)
    expect((thrown as SessionError).code).toBe('INVALID_APPEND')
    expect((thrown as Error).message).toMatch(message)
    expect(snapshot(session)).toEqual(before)
  })

  it('lets a validator reject an append before it is logged', () => {
    const session = seeded()
    const before = snapshot(session)
    const remove = session.addValidator((candidate) => {
      if (candidate.type === 'user/message') throw new Error('no more user messages')
    })
    expect(() => session.append('user/message', { message: createUserMessage('x') }, 'append')).toThrow(
      'no more user messages',
    )
    expect(snapshot(session)).toEqual(before)
    remove()
    session.append('user/message', { message: createUserMessage('x') }, 'append')
    expect(session.length).toBe(4)
  })

  it('returns the latest request header', () => {
    const session = seeded()
    expect(session.requestHeader()).toBeUndefined()
    session.append('request/header', {
      header: { config: { provider: 'p', model: 'm', reasoningEffort: 'max' } },
      reason: 'initial',
    })
    session.append('request/header', {
      header: { config: { provider: 'p', model: 'm', reasoningEffort: 'low' } },
      reason: 'change',
    })
    expect(session.requestHeader()?.config.reasoningEffort).toBe('low')
  })

  it('caches deriveMessages per generation and length', () => {
    const session = seeded()
    const first = session.deriveMessages()
    expect(session.deriveMessages()).toBe(first)
    session.append('user/message', { message: createUserMessage('next') }, 'append')
    const second = session.deriveMessages()
    expect(second).not.toBe(first)
    expect(second.length).toBe(4)
    expect(first.length).toBe(3)
  })

  it('refuses appends after close', () => {
    const session = seeded()
    session.close()
    expect(() => session.append('user/message', { message: createUserMessage('x') }, 'append')).toThrow(/closed/)
  })
})
