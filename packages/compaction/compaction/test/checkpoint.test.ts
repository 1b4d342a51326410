import { createAssistantMessage, createMessage, createUserMessage, textBlock } from '@warmfold/llm'
import type { Message, MessageSource } from '@warmfold/llm'
import { Session } from '@warmfold/session'
import { describe, expect, it } from 'vitest'
import { checkpointCompactionId, checkpointSource, isCheckpointMessage } from '../src/index.ts'
import { CHECKPOINT_PLUGIN, isCheckpointSource } from '../src/checkpoint.ts'

const checkpointMessage = (compactionId: string): Message =>
  createMessage({ role: 'user', content: 'summary', source: checkpointSource(compactionId) })

describe('checkpoint markers', () => {
  it('builds a frozen plugin source that carries the compaction id', () => {
    const source = checkpointSource('c1')
    expect(source).toEqual({ kind: 'plugin', plugin: CHECKPOINT_PLUGIN, details: { compactionId: 'c1' } })
    expect(CHECKPOINT_PLUGIN).toBe('warmfold/compaction-checkpoint')
    expect(Object.isFrozen(source)).toBe(true)
    expect(Object.isFrozen((source as { details: object }).details)).toBe(true)
  })

  it('recognises checkpoint sources and nothing else', () => {
    expect(isCheckpointSource(checkpointSource('c1'))).toBe(true)
    expect(isCheckpointSource({ kind: 'plugin', plugin: CHECKPOINT_PLUGIN })).toBe(true)
    const others: Array<MessageSource | undefined> = [
      undefined,
      { kind: 'user' },
      { kind: 'model', provider: 'p', model: 'm' },
      { kind: 'tool', toolCallId: 'call-1' },
      { kind: 'plugin', plugin: 'some-other-plugin', details: { compactionId: 'c1' } },
    ]
    for (const source of others) expect(isCheckpointSource(source)).toBe(false)
  })

  it('recognises checkpoint messages only in the user role', () => {
    expect(isCheckpointMessage(checkpointMessage('c1'))).toBe(true)
    expect(isCheckpointMessage(createUserMessage('summary'))).toBe(false)
    expect(
      isCheckpointMessage(createMessage({ role: 'assistant', content: 'summary', source: checkpointSource('c1') })),
    ).toBe(false)
    expect(isCheckpointMessage(createAssistantMessage([textBlock('summary')], { provider: 'p', model: 'm' }))).toBe(
      false,
    )
  })

  it('reads the compaction id of a checkpoint, and undefined for anything else', () => {
    expect(checkpointCompactionId(checkpointMessage('c1'))).toBe('c1')
    expect(checkpointCompactionId(createUserMessage('summary'))).toBeUndefined()
    expect(
      checkpointCompactionId(createMessage({ role: 'assistant', content: 'x', source: checkpointSource('c1') })),
    ).toBeUndefined()
    expect(
      checkpointCompactionId(
        createMessage({ role: 'user', content: 'x', source: { kind: 'plugin', plugin: CHECKPOINT_PLUGIN } }),
      ),
    ).toBeUndefined()
    expect(
      checkpointCompactionId(
        createMessage({
          role: 'user',
          content: 'x',
          source: { kind: 'plugin', plugin: CHECKPOINT_PLUGIN, details: { compactionId: 7 } },
        }),
      ),
    ).toBeUndefined()
  })

  it('survives the session log (stored as a detached JSON copy)', () => {
    const session = new Session('markers')
    session.append('user/message', { message: createUserMessage('hello') }, 'append')
    const event = session.append(
      'user/message',
      { message: checkpointMessage('c42') },
      { op: 'replace', start: 0, end: 0, sourceEventSeqs: [0] },
    )
    const [stored] = session.deriveMessages() as [Message]
    expect(stored).toBe(event.data.message)
    expect(isCheckpointMessage(stored)).toBe(true)
    expect(checkpointCompactionId(stored)).toBe('c42')
  })
})
