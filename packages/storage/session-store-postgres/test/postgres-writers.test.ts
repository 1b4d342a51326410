import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import type { PostgresSessionBackend } from '../src/index.ts'
import { postgresSessionStore } from '../src/index.ts'
import { SessionLease } from '../src/session-lease.ts'
import { appendMessages, ask, forkWriter, openAfterExpiry, sessionError, sql, testUrl, uniqueId } from './pg-fixtures.ts'

interface Reply {
  ok: boolean
  code?: string
  message?: string
  holder?: string
  length?: number
}

const stores: PostgresSessionBackend[] = []
const children: ChildProcess[] = []
function store(leaseMs?: number): PostgresSessionBackend {
  const created = postgresSessionStore({ url: testUrl(), ...(leaseMs === undefined ? {} : { leaseMs }) })
  stores.push(created)
  return created
}
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  for (const created of stores.splice(0)) await created.close()
})

async function writerProcess(): Promise<ChildProcess> {
  const child = forkWriter()
  children.push(child)
  return child
}

describe('PostgreSQL store with several writers', () => {
  it('refuses a writer in another process with LOCKED naming it, until it closes', async () => {
    const id = uniqueId('two-procs')
    const child = await writerProcess()
    const opened = await ask<Reply>(child, { op: 'open', url: testUrl(), id, leaseMs: 30_000, create: true })
    expect(opened.ok).toBe(true)
    expect(await ask<Reply>(child, { op: 'append', count: 5 })).toMatchObject({ ok: true })
    expect(await ask<Reply>(child, { op: 'flush' })).toMatchObject({ ok: true })
    const refused = await sessionError(store().open(id, {}, () => {}))
    expect(refused.code).toBe('LOCKED')
    expect(refused.message).toContain(`pid ${child.pid}`)
    expect(await ask<Reply>(child, { op: 'close' })).toMatchObject({ ok: true })
    const session = await store().open(id, {}, () => {})
    expect(session.length).toBe(5)
  })

  it('the holder of a released lease reads as expired, not as an error: a store opening while the holder closes takes the lease', async () => {
    const id = uniqueId('released')
    const first = store()
    await first.release(await first.create(id, {}))
    // A release sets expires_at to -infinity; subtracting it from now was an error ("cannot
    // subtract infinite timestamps") that an open racing the release used to fail with.
    expect(await sql(testUrl(), 'SELECT expires_at::text FROM warmfold_leases WHERE session_id = $1', [id])).toEqual([{ expires_at: '-infinity' }])
    const pool = new pg.Pool({ connectionString: testUrl() })
    try {
      expect(await SessionLease.current(pool, id)).toMatchObject({ token: '1', leftMs: 0 })
    } finally {
      await pool.end()
    }
    const reopened = await store().open(id, {}, () => {})
    expect(reopened.length).toBe(0)
  })

  it('a lease that expired is taken over, and the old holder is refused by the fencing token', async () => {
    const id = uniqueId('fencing')
    const old = store()
    const session = await old.create(id, {})
    appendMessages(session, 2, 'old')
    await old.flush(session)
    // The old holder pauses past its lease (a GC pause, a frozen VM): its lease runs out.
    await sql(testUrl(), `UPDATE warmfold_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = $1`, [id])
    const next = store()
    const taken = await next.open(id, {}, () => {})
    expect(taken.length).toBe(2)
    appendMessages(session, 1, 'old')
    const refused = await sessionError(old.flush(session))
    expect(refused.code).toBe('LOCKED')
    expect(refused.message).toContain(next.holder)
    expect((await sessionError(old.flush(session))).code).toBe('CLOSED') // and stays refused
    appendMessages(taken, 1, 'new')
    await next.flush(taken)
    const rows = await sql<{ event: string }>(testUrl(), 'SELECT event FROM warmfold_events WHERE session_id = $1 ORDER BY seq', [id])
    expect(rows.map((row) => JSON.parse(row.event).data.message.id)).toEqual(['old-0', 'old-1', 'new-2'])
  })

  it('kill -9 of a writer in the middle of a flush transaction leaves exactly the committed events', async () => {
    const id = uniqueId('kill9')
    const child = await writerProcess()
    expect(await ask<Reply>(child, { op: 'open', url: testUrl(), id, leaseMs: 500, create: true })).toMatchObject({ ok: true })
    await ask<Reply>(child, { op: 'append', count: 10 })
    expect(await ask<Reply>(child, { op: 'flush' })).toMatchObject({ ok: true })
    await ask<Reply>(child, { op: 'append', count: 50 })

    // Hold the session row so the child's INSERT blocks in its foreign-key check: its rows are
    // written but uncommitted when it dies.
    const blocker = new pg.Client({ connectionString: testUrl() })
    await blocker.connect()
    try {
      await blocker.query('BEGIN')
      await blocker.query('SELECT 1 FROM warmfold_sessions WHERE session_id = $1 FOR UPDATE', [id])
      child.send({ op: 'flush' })
      for (;;) {
        // Another connection: pg_stat_activity is a snapshot fixed for the blocker's transaction.
        const waiting = await sql(testUrl(), `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO warmfold_events%'`)
        if (waiting.length === 1) break
        await new Promise((done) => setTimeout(done, 20))
      }
      child.kill('SIGKILL')
      await once(child, 'exit')
    } finally {
      await blocker.query('ROLLBACK')
      await blocker.end()
    }
    const session = await openAfterExpiry(store(), id)
    expect(session.length).toBe(10)
    expect(session.events.map((event) => event.seq)).toEqual([...Array(10).keys()])
  })

  it('a crashed holder in another process blocks only until its lease expires', async () => {
    const id = uniqueId('crash')
    const child = await writerProcess()
    const opened = await ask<Reply>(child, { op: 'open', url: testUrl(), id, leaseMs: 400, create: true })
    expect(opened.ok).toBe(true)
    child.kill('SIGKILL')
    await once(child, 'exit')
    const taker = store()
    const session = await openAfterExpiry(taker, id)
    const lease = await sql<{ token: string; holder: string }>(testUrl(), 'SELECT token, holder FROM warmfold_leases WHERE session_id = $1', [id])
    expect(lease).toEqual([{ token: '2', holder: taker.holder }])
    appendMessages(session, 1)
    await taker.flush(session)
  })
})
