import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createUserMessage } from '@warmfold/llm'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SessionError, SessionStore } from '../src/index.ts'

let root: string
const contexts: TestContext[] = []

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'warmfold-paths-'))
})
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
  await rm(root, { recursive: true, force: true })
})

async function store(directory: string): Promise<TestContext> {
  const context = await createTestContext()
  context.ctx.plugin(SessionStore, { store: 'file', directory })
  contexts.push(context)
  return context
}

async function failure(promise: Promise<unknown>): Promise<SessionError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(SessionError.isInstance(error), String(error)).toBe(true)
  return error as SessionError
}

describe('the file store folder', () => {
  it('creates a missing nested folder with mode 0700 on the first create', async () => {
    const directory = join(root, 'a', 'b', 'sessions')
    const context = await store(directory)
    const session = await context.ctx.sessions.create('first')
    session.append('user/message', { message: createUserMessage('hello', 'm0') }, 'append')
    await context.ctx.sessions.close(session)
    for (const folder of [join(root, 'a'), join(root, 'a', 'b'), directory])
      expect((await stat(folder)).mode & 0o777).toBe(0o700)
    expect((await readFile(join(directory, 'first.jsonl'), 'utf8')).split('\n')).toHaveLength(2)
    context.assertClean()
  })

  it('opening in a missing folder says NOT_FOUND (not a raw ENOENT on the lock), so open-or-create works', async () => {
    // What ctx.agentLoop.create does for a new session id.
    const directory = join(root, 'not', 'yet')
    const context = await store(directory)
    const error = await failure(context.ctx.sessions.open('session-1'))
    expect(error.code).toBe('NOT_FOUND')
    expect(error.message).toContain(join(directory, 'session-1.jsonl'))
    const session = await context.ctx.sessions.create('session-1')
    expect((await stat(directory)).mode & 0o777).toBe(0o700)
    await context.ctx.sessions.close(session)
    context.assertClean()
  })

  it('leaves the mode of an existing folder alone', async () => {
    const directory = join(root, 'shared')
    await mkdir(directory, { mode: 0o755 })
    const context = await store(directory)
    await context.ctx.sessions.create('kept')
    expect((await stat(directory)).mode & 0o777).toBe(0o755)
  })

  it('names the path when the folder is a file', async () => {
    const directory = join(root, 'plain-file')
    await writeFile(directory, 'not a folder')
    const error = await failure((await store(directory)).ctx.sessions.create('x'))
    expect(error.code).toBe('IO')
    expect(error.message).toContain(`the session folder ${directory} could not be created`)
  })
})

describe('a directory in place of the session file', () => {
  it('create fails with IO naming the path, not EXISTS or a raw EISDIR, and leaves no lock', async () => {
    await mkdir(join(root, 'taken.jsonl'))
    const error = await failure((await store(root)).ctx.sessions.create('taken'))
    expect(error.code).toBe('IO')
    expect(error.message).toBe(
      `session taken: ${join(root, 'taken.jsonl')} is a directory, not a session file; move it away to use this session id`,
    )
    await expect(stat(join(root, 'taken.jsonl.lock'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('open fails with IO naming the path, and leaves no lock', async () => {
    await mkdir(join(root, 'taken.jsonl'))
    const error = await failure((await store(root)).ctx.sessions.open('taken'))
    expect(error.code).toBe('IO')
    expect(error.message).toContain(`${join(root, 'taken.jsonl')} is a directory, not a session file`)
    await expect(stat(join(root, 'taken.jsonl.lock'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('a directory in place of the lock file is named too', async () => {
    await mkdir(join(root, 'locked.jsonl.lock'))
    const error = await failure((await store(root)).ctx.sessions.create('locked'))
    expect(error.code).toBe('IO')
    expect(error.message).toContain(`the lock path ${join(root, 'locked.jsonl.lock')} is a directory, not a lock file`)
  })
})
