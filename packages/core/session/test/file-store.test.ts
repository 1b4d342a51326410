import { existsSync } from 'node:fs'
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson, createUserMessage } from '@warmfold/llm'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Session, TornTailRepair } from '../src/index.ts'
import { SessionError, SessionStore } from '../src/index.ts'

let directory: string
const contexts: TestContext[] = []

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-file-store-'))
})
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.dispose()
  await rm(directory, { recursive: true, force: true })
})

async function store(): Promise<TestContext> {
  const context = await createTestContext()
  context.ctx.plugin(SessionStore, { store: 'file', directory })
  contexts.push(context)
  return context
}

async function writeSession(id: string, messages: number): Promise<{ file: string; session: Session }> {
  const context = await store()
  const session = await context.ctx.sessions.create(id)
  for (let index = 0; index < messages; index++)
    session.append('user/message', { message: createUserMessage(`message ${index}`, `m${index}`) }, 'append')
  await context.ctx.sessions.close(session)
  return { file: join(directory, `${id}.jsonl`), session }
}

async function openError(id: string, options?: { repairTornTail?: boolean }): Promise<SessionError> {
  const context = await store()
  const error = await context.ctx.sessions.open(id, options).then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(SessionError.isInstance(error)).toBe(true)
  return error as SessionError
}

describe('JSONL file store', () => {
  it('writes one canonical event per line and makes it durable on flush', async () => {
    const context = await store()
    const session = await context.ctx.sessions.create('durable')
    session.append('user/message', { message: createUserMessage('one', 'm0') }, 'append')
    const file = join(directory, 'durable.jsonl')
    expect(await readFile(file, 'utf8')).toBe('')
    await context.ctx.sessions.flush(session)
    const lines = (await readFile(file, 'utf8')).split('\n')
    expect(lines).toEqual([canonicalJson(session.eventAt(0)), ''])
    context.assertClean()
  })

  it('flushes pending events and releases the lock when the store unloads', async () => {
    const context = await store()
    const session = await context.ctx.sessions.create('unload')
    session.append('user/message', { message: createUserMessage('pending', 'm0') }, 'append')
    await context.dispose()
    expect(existsSync(join(directory, 'unload.jsonl.lock'))).toBe(false)
    const reopened = await (await store()).ctx.sessions.open('unload')
    expect(reopened.deriveMessages().map((message) => message.id)).toEqual(['m0'])
  })

  it('announces each held session on session/close as it unloads: what a listener appends then is flushed with the rest', async () => {
    const context = await store()
    const session = await context.ctx.sessions.create('announced')
    session.append('user/message', { message: createUserMessage('pending', 'm0') }, 'append')
    const closed: string[] = []
    // A listener that closes what it has open in the log (an engine's background fold bracket).
    context.ctx.on('session/close', (announced) => {
      closed.push(announced.id)
      announced.append('user/message', { message: createUserMessage('closing words', 'm1') }, 'append')
    })
    await context.dispose()
    expect(closed).toEqual(['announced'])
    const reopened = await (await store()).ctx.sessions.open('announced')
    expect(reopened.deriveMessages().map((message) => message.id)).toEqual(['m0', 'm1'])
  })

  it('lists stored sessions and reports a missing one by id and file', async () => {
    await writeSession('b', 1)
    await writeSession('a', 1)
    const context = await store()
    expect(await context.ctx.sessions.list()).toEqual(['a', 'b'])
    const error = await openError('missing')
    expect(error.code).toBe('NOT_FOUND')
    expect(error.message).toContain(join(directory, 'missing.jsonl'))
  })

  it('rejects a corrupt line anywhere with file and line, and changes nothing', async () => {
    const { file } = await writeSession('corrupt', 4)
    const lines = (await readFile(file, 'utf8')).split('\n')
    lines[1] = lines[1]!.replace('"seq":1', '"seq":7')
    await writeFile(file, lines.join('\n'))
    const before = await readFile(file)
    const error = await openError('corrupt')
    expect(error.code).toBe('CORRUPT')
    expect(error.message).toContain(`${file}:2:`)
    expect(error.message).toContain('stored seq 7')
    expect(await readFile(file)).toEqual(before)
    expect(existsSync(`${file}.lock`)).toBe(false)
  })

  it('rejects a line that breaks a surface rule, naming the line', async () => {
    const { file } = await writeSession('rules', 2)
    await appendFile(
      file,
      `${canonicalJson({ seq: 2, type: 'user/message', data: { message: createUserMessage('x', 'x') }, time: 1 })}\n`,
    )
    const error = await openError('rules')
    expect(error.code).toBe('CORRUPT')
    expect(error.message).toMatch(new RegExp(`${file}:3: .*needs a surface intent`))
  })

  it('rejects a torn last line unless the caller opts into repair', async () => {
    const { file } = await writeSession('torn', 3)
    const good = await readFile(file)
    await appendFile(file, '{"seq":3,"type":"user/mess')
    const error = await openError('torn')
    expect(error.code).toBe('TORN_TAIL')
    expect(error.message).toContain(`${file}:4:`)
    expect(error.message).toContain('repairTornTail')
    expect((await readFile(file)).length).toBe(good.length + 26)
  })

  it('repairs a torn tail into a .corrupt sidecar and says so', async () => {
    const { file } = await writeSession('repair', 3)
    const good = await readFile(file)
    await appendFile(file, '{"seq":3,"type":"user/mess')
    const context = await store()
    const repairs: TornTailRepair[] = []
    context.ctx.on('session/repair', (repair) => void repairs.push(repair))
    const session = await context.ctx.sessions.open('repair', { repairTornTail: true })
    expect(session.length).toBe(3)
    expect(repairs).toEqual([{ sessionId: 'repair', file, sidecar: `${file}.corrupt`, line: 4, bytes: 26 }])
    expect(await readFile(`${file}.corrupt`, 'utf8')).toBe('{"seq":3,"type":"user/mess')
    expect(await readFile(file)).toEqual(good)
    session.append('user/message', { message: createUserMessage('after', 'm3') }, 'append')
    await context.ctx.sessions.close(session)
    const reopened = await (await store()).ctx.sessions.open('repair')
    expect(reopened.deriveMessages().map((message) => message.id)).toEqual(['m0', 'm1', 'm2', 'm3'])
  })

  it('keeps a complete last line that only lacks its newline, and appends after it', async () => {
    const { file } = await writeSession('newline', 2)
    await writeFile(file, (await readFile(file, 'utf8')).replace(/\n$/, ''))
    const context = await store()
    const session = await context.ctx.sessions.open('newline')
    session.append('user/message', { message: createUserMessage('third', 'm2') }, 'append')
    await context.ctx.sessions.close(session)
    const reopened = await (await store()).ctx.sessions.open('newline')
    expect(reopened.length).toBe(3)
  })

  it('refuses a second writer with a clear error naming the lock', async () => {
    const first = await store()
    const session = await first.ctx.sessions.create('shared')
    const error = await openError('shared')
    expect(error.code).toBe('LOCKED')
    expect(error.message).toContain(join(directory, 'shared.jsonl.lock'))
    expect(error.message).toContain(`pid ${process.pid}`)
    await first.ctx.sessions.close(session)
    const second = await store()
    expect((await second.ctx.sessions.open('shared')).id).toBe('shared')
  })

  it('takes over a lock left by a process that no longer runs', async () => {
    await writeSession('stale', 1)
    const { hostname } = await import('node:os')
    await writeFile(
      join(directory, 'stale.jsonl.lock'),
      JSON.stringify({ pid: 2 ** 22 + 12345, hostname: hostname(), token: 'dead' }),
    )
    const session = await (await store()).ctx.sessions.open('stale')
    expect(session.length).toBe(1)
  })

  it('refuses to create a session that exists and ids that are not file-safe', async () => {
    await writeSession('exists', 1)
    const context = await store()
    await expect(context.ctx.sessions.create('exists')).rejects.toMatchObject({ code: 'EXISTS' })
    await expect(context.ctx.sessions.create('../escape')).rejects.toMatchObject({ code: 'INVALID_ID' })
    expect(existsSync(join(directory, 'exists.jsonl.lock'))).toBe(false)
  })
})

describe('SessionStore service', () => {
  it('emits session/event for every append of a held session', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, {})
    const seen: number[] = []
    context.ctx.on('session/event', (_session, event) => void seen.push(event.seq))
    const session = await context.ctx.sessions.create('events')
    session.append('user/message', { message: createUserMessage('a') }, 'append')
    session.append('user/message', { message: createUserMessage('b') }, 'append')
    expect(seen).toEqual([0, 1])
    context.assertClean()
  })

  it('memory store reopens a closed session by replaying its events', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, {})
    const session = await context.ctx.sessions.create('memory')
    session.append('user/message', { message: createUserMessage('a', 'a') }, 'append')
    await context.ctx.sessions.close(session)
    const reopened = await context.ctx.sessions.open('memory')
    expect(reopened).not.toBe(session)
    expect(canonicalJson(reopened.events)).toBe(canonicalJson(session.events))
    context.assertClean()
  })

  it.each([
    [{ store: 'disk' }, /store/],
    [{ directory: 3 }, /directory/],
    [{ retries: 1 }, /unknown key "retries"/],
  ])('rejects config %j at load, naming the key', async (config, message) => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, config as never)
    expect(context.errors.map(String).join('\n')).toMatch(message)
    expect(context.ctx.get('sessions')).toBeUndefined()
  })
})

describe('session/open', () => {
  it('fires when a session is created or reopened, so validators can be attached before any append', async () => {
    const context = await createTestContext()
    contexts.push(context)
    context.ctx.plugin(SessionStore, {})
    const opened: Array<[string, number]> = []
    context.ctx.on('session/open', (session) => {
      opened.push([session.id, session.length])
      session.addValidator((candidate) => {
        if (candidate.type === 'request/header') throw new Error('headers are frozen in this test')
      })
    })
    const session = await context.ctx.sessions.create('watched')
    session.append('user/message', { message: createUserMessage('a') }, 'append')
    expect(() =>
      session.append('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' }),
    ).toThrow('headers are frozen')
    await context.ctx.sessions.close(session)
    await context.ctx.sessions.open('watched')
    expect(opened).toEqual([
      ['watched', 0],
      ['watched', 1],
    ])
    context.assertClean()
  })
})
