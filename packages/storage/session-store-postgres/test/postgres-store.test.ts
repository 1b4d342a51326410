import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson, createUserMessage } from '@warmfold/llm'
import { JsonlFileBackend } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { PostgresSessionBackend } from '../src/index.ts'
import { postgresSessionStore } from '../src/index.ts'
import { appendMessages, freshDatabase, sessionError, sql, testUrl, uniqueId } from './pg-fixtures.ts'

const stores: PostgresSessionBackend[] = []
function store(leaseMs?: number, url = testUrl()): PostgresSessionBackend {
  const created = postgresSessionStore({ url, ...(leaseMs === undefined ? {} : { leaseMs }) })
  stores.push(created)
  return created
}
afterEach(async () => {
  for (const created of stores.splice(0)) await created.close()
})

/**
 * The TCP sockets keeping this process alive (`getActiveResourcesInfo` lists only what does).
 * Sockets only: the test worker's own timers come and go, and a pooled connection that keeps a
 * process alive does so through its socket (its idle timer goes with it).
 */
const liveSockets = () => process.getActiveResourcesInfo().filter((type) => type === 'TCPSocketWrap').length

describe('PostgreSQL session store', () => {
  it('holding no session, it keeps no connection or timer alive that would stop the host process from exiting', async () => {
    const before = liveSockets()
    const used = store()
    const session = await used.create(uniqueId('idle'), {})
    appendMessages(session, 2)
    await used.release(session)
    expect(await used.list()).toContain(session.id)
    expect(liveSockets()).toBe(before)
  })

  it('reopens byte-identical events, messages and rows a JSONL store reads as its own file', async () => {
    const id = uniqueId('roundtrip')
    const writer = store()
    const session = await writer.create(id, {})
    appendMessages(session, 3)
    await writer.flush(session)
    session.unit(() => {
      session.append(
        'user/message',
        { message: createUserMessage('replacement', 'r1') },
        { op: 'replace', start: 0, end: 0, sourceEventSeqs: [0] },
      )
      session.append('user/message', { message: createUserMessage('after', 'r2') }, 'append')
    })
    await writer.release(session)

    const reopened = await store().open(id, {}, () => {})
    expect(canonicalJson(reopened.events)).toBe(canonicalJson(session.events))
    expect(canonicalJson(reopened.deriveMessages())).toBe(canonicalJson(session.deriveMessages()))
    const rows = await sql<{ event: string }>(
      testUrl(),
      'SELECT event FROM warmfold_events WHERE session_id = $1 ORDER BY seq',
      [id],
    )
    expect(rows.map((row) => JSON.parse(row.event).unit)).toEqual([undefined, undefined, undefined, 2, undefined])

    // The rows are the lines of the JSONL store's file: it opens them and writes on after them.
    const directory = mkdtempSync(join(tmpdir(), 'warmfold-pg-jsonl-'))
    try {
      const file = new JsonlFileBackend(directory)
      writeFileSync(file.fileOf(id), rows.map((row) => `${row.event}\n`).join(''))
      const moved = await file.open(id, {}, () => {})
      expect(canonicalJson(moved.events)).toBe(canonicalJson(session.events))
      file.releaseSync(moved)
      expect(readFileSync(file.fileOf(id), 'utf8')).toBe(rows.map((row) => `${row.event}\n`).join(''))
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  })

  it('flushes only settled events: a unit being built waits for the next flush', async () => {
    const writer = store()
    const session = await writer.create(uniqueId('unit'), {})
    appendMessages(session, 1)
    let during: Promise<void> = Promise.resolve()
    session.unit(() => {
      appendMessages(session, 1)
      during = writer.flush(session)
    })
    await during
    expect(await sql(testUrl(), 'SELECT 1 FROM warmfold_events WHERE session_id = $1', [session.id])).toHaveLength(1)
    await writer.flush(session)
    expect(await sql(testUrl(), 'SELECT 1 FROM warmfold_events WHERE session_id = $1', [session.id])).toHaveLength(2)
  })

  it('refuses create of an existing id, open of a missing one, and lists ids sorted', async () => {
    const id = uniqueId('exists')
    const writer = store()
    await writer.create(id, {})
    expect((await sessionError(store().create(id, {}))).code).toBe('EXISTS')
    const missing = await sessionError(writer.open(uniqueId('missing'), {}, () => {}))
    expect(missing.code).toBe('NOT_FOUND')
    expect(missing.message).toContain('127.0.0.1')
    const listed = await writer.list()
    expect(listed).toContain(id)
    expect(listed).toEqual(listed.toSorted())
  })

  it('stores and reopens 100k events', async () => {
    const id = uniqueId('large')
    const writer = store()
    const session = await writer.create(id, {})
    for (let batch = 0; batch < 10; batch++) {
      appendMessages(session, 10_000)
      await writer.flush(session)
    }
    await writer.release(session)
    const reopened = await store().open(id, {}, () => {})
    expect(reopened.length).toBe(100_000)
    expect(canonicalJson(reopened.eventAt(99_999))).toBe(canonicalJson(session.eventAt(99_999)))
  }, 120_000)

  it('refuses a second store in the same process with LOCKED naming the holder', async () => {
    const id = uniqueId('locked')
    const first = store()
    const session = await first.create(id, {})
    const refused = await sessionError(store().open(id, {}, () => {}))
    expect(refused.code).toBe('LOCKED')
    expect(refused.message).toContain(first.holder)
    await first.release(session)
    const second = store()
    expect((await second.open(id, {}, () => {})).length).toBe(0)
  })

  it('reports a corrupt row naming the session and seq, and opens nothing', async () => {
    const id = uniqueId('corrupt')
    const writer = store()
    const session = await writer.create(id, {})
    appendMessages(session, 2)
    await writer.release(session)
    await sql(testUrl(), `UPDATE warmfold_events SET event = '{"seq":1,' WHERE session_id = $1 AND seq = 1`, [id])
    const corrupt = await sessionError(store().open(id, {}, () => {}))
    expect(corrupt.code).toBe('CORRUPT')
    expect(corrupt.message).toContain(`session ${id}`)
    expect(corrupt.message).toContain('seq 1')
  })

  it('a database that goes away under a store fails open and list with IO naming the operation and the URL', async () => {
    const url = await freshDatabase()
    const used = store(undefined, url)
    const id = uniqueId('gone')
    await used.release(await used.create(id, {}))
    await sql(testUrl(), `DROP DATABASE ${new URL(url).pathname.slice(1)} WITH (FORCE)`)
    const opened = await sessionError(used.open(id, {}, () => {}))
    expect(opened.code).toBe('IO')
    expect(opened.message).toMatch(
      new RegExp(
        `^take the lease of session ${id} at ${url.replace(/[.?*+^$()[\]{}|/\\]/g, '\\$&')} failed: database ".+" does not exist$`,
      ),
    )
    const listed = await sessionError(used.list())
    expect(listed.code).toBe('IO')
    expect(listed.message).toContain(`list sessions at ${url} failed`)
  })

  it('never shows the password in an error', async () => {
    const url = new URL(testUrl())
    url.password = 'hunter2-secret'
    url.port = '1' // nothing listens there
    const unreachable = postgresSessionStore({ url: url.toString() })
    stores.push(unreachable)
    const failed = await sessionError(unreachable.create(uniqueId('pw'), {}))
    expect(failed.code).toBe('IO')
    expect(failed.message).not.toContain('hunter2')
    expect(failed.message).toContain('postgres://postgres:***@127.0.0.1:1/')
  })
})
