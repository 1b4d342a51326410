import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createUserMessage } from '@warmfold/llm'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { Session } from '../src/index.ts'
import { MemoryBackend, SessionError, SessionStore } from '../src/index.ts'

const contexts: TestContext[] = []
const folders: string[] = []
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

async function store(config: SessionStore.Config | { store: 'memory' }): Promise<TestContext> {
  const context = await createTestContext()
  context.ctx.plugin(SessionStore, config)
  contexts.push(context)
  return context
}

async function fileStore(): Promise<{ context: TestContext; directory: string }> {
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-create-delete-'))
  folders.push(directory)
  return { context: await store({ store: 'file', directory }), directory }
}

async function errorOf(promise: Promise<unknown>): Promise<SessionError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(SessionError.isInstance(error)).toBe(true)
  return error as SessionError
}

function appendOne(session: Session): void {
  session.append('user/message', { message: createUserMessage('hello', 'm1') }, 'append')
}

describe('SessionStore.create and delete', () => {
  it('two creates of one id at once: one session, the other EXISTS (the file store, not its lock error)', async () => {
    const { context } = await fileStore()
    const outcomes = await Promise.allSettled([0, 1, 2].map(() => context.ctx.sessions.create('child')))
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected'])
    for (const outcome of outcomes.slice(1)) {
      const error = (outcome as PromiseRejectedResult).reason as SessionError
      expect([error.code, error.message]).toEqual(['EXISTS', 'session child is being created in this store'])
    }
    context.assertClean()
  })

  it('delete removes a held session of the file store: its file and lock go, and the id can be created again', async () => {
    const { context, directory } = await fileStore()
    const session = await context.ctx.sessions.create('half-made')
    appendOne(session)
    await context.ctx.sessions.flush(session)
    const closed: string[] = []
    context.ctx.on('session/close', (closing: Session) => void closed.push(closing.id))
    await context.ctx.sessions.delete(session)
    expect(closed).toEqual(['half-made'])
    expect(session.isClosed).toBe(true)
    expect(existsSync(join(directory, 'half-made.jsonl'))).toBe(false)
    expect(existsSync(join(directory, 'half-made.jsonl.lock'))).toBe(false)
    expect((await errorOf(context.ctx.sessions.read('half-made'))).code).toBe('NOT_FOUND')
    expect(await context.ctx.sessions.list()).toEqual([])
    expect((await context.ctx.sessions.create('half-made')).length).toBe(0)
    context.assertClean()
  })

  it('delete removes a held session of the memory store', async () => {
    const context = await store({ store: 'memory' })
    const session = await context.ctx.sessions.create('half-made')
    appendOne(session)
    await context.ctx.sessions.delete(session)
    expect((await errorOf(context.ctx.sessions.read('half-made'))).code).toBe('NOT_FOUND')
    expect((await errorOf(context.ctx.sessions.delete(session))).code).toBe('CLOSED')
    context.assertClean()
  })

  it('a backend without delete: UNSUPPORTED, naming what was kept, and the session is closed', async () => {
    const backend = new MemoryBackend()
    Object.defineProperty(backend, 'delete', { value: undefined })
    const context = await store({ store: backend, directory: '' })
    const session = await context.ctx.sessions.create('kept')
    appendOne(session)
    const error = await errorOf(context.ctx.sessions.delete(session))
    expect([error.code, error.message]).toEqual([
      'UNSUPPORTED',
      "session kept could not be deleted: its store's backend has no delete(), so it was closed with its 1 event(s) " +
        'instead',
    ])
    expect(session.isClosed).toBe(true)
    expect((await context.ctx.sessions.read('kept')).length).toBe(1)
    context.assertClean()
  })
})
