import { createUserMessage } from '@warmfold/llm'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { SessionBackend, SessionOptions } from '../src/index.ts'
import { Session, SessionStore } from '../src/index.ts'

// A storage package plugs in by passing its SessionBackend as `store`. This one keeps events in
// a map and, like a database backend, has no releaseSync: it can only release asynchronously.

class RecordingBackend implements SessionBackend {
  readonly stored = new Map<string, unknown[]>()
  readonly released: string[] = []
  private readonly flushed = new Map<Session, number>()

  async create(id: string, options: SessionOptions): Promise<Session> {
    this.stored.set(id, [])
    const session = new Session(id, options)
    this.flushed.set(session, 0)
    return session
  }

  async open(id: string, options: SessionOptions): Promise<Session> {
    const session = new Session(id, options)
    for (const event of this.stored.get(id) ?? []) session.restore(event as never)
    this.flushed.set(session, session.length)
    return session
  }

  async list(): Promise<string[]> {
    return [...this.stored.keys()].toSorted()
  }

  async read(id: string): Promise<Session> {
    const session = await this.open(id, {})
    session.close()
    return session
  }

  async flush(session: Session): Promise<void> {
    const from = this.flushed.get(session) ?? 0
    const rows = this.stored.get(session.id) as unknown[]
    for (let seq = from; seq < session.settledLength; seq++) rows.push(session.eventAt(seq))
    this.flushed.set(session, session.settledLength)
  }

  async release(session: Session): Promise<void> {
    await this.flush(session)
    session.close()
    this.released.push(session.id)
  }
}

const contexts: TestContext[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
})

describe('SessionStore with a backend object as store', () => {
  it('creates, flushes and reopens through the backend', async () => {
    const backend = new RecordingBackend()
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, { store: backend })
    const session = await context.ctx.sessions.create('s1')
    session.append('user/message', { message: createUserMessage('hello', 'm1') }, 'append')
    await context.ctx.sessions.flush(session)
    expect(backend.stored.get('s1')).toHaveLength(1)
    await context.ctx.sessions.close(session)
    const reopened = await context.ctx.sessions.open('s1')
    expect(reopened.events).toEqual(session.events)
    expect(await context.ctx.sessions.list()).toEqual(['s1'])
    context.assertClean()
  })

  it('closeAll flushes and releases every held session through the async release', async () => {
    const backend = new RecordingBackend()
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, { store: backend })
    const first = await context.ctx.sessions.create('a')
    await context.ctx.sessions.create('b')
    first.append('user/message', { message: createUserMessage('unflushed', 'm1') }, 'append')
    await context.ctx.sessions.closeAll()
    expect(backend.released.toSorted()).toEqual(['a', 'b'])
    expect(backend.stored.get('a')).toHaveLength(1)
    expect(first.isClosed).toBe(true)
    context.assertClean()
  })

  it('refuses an object that is not a backend, naming the missing methods', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, { store: { create() {}, open() {} } } as never)
    expect(context.errors.map(String).join('\n')).toContain(
      'SessionStore config: store must be "memory", "file" or a SessionBackend; the object given has no list, flush, release, read methods',
    )
    expect(context.ctx.get('sessions')).toBeUndefined()
  })
})
