import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import type { Session } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import type { PostgresSessionBackend } from '../src/index.ts'
import { postgresSessionStore } from '../src/index.ts'
import { SessionLease } from '../src/session-lease.ts'
import {
  appendMessages,
  ask,
  forkWriter,
  openAfterExpiry,
  sessionError,
  sql,
  testUrl,
  uniqueId,
} from './pg-fixtures.ts'

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

/**
 * Waits until `count` server backends wait for a lock in a query `LIKE` `pattern` (or until
 * `stop()` says there is no point: what would wait has finished).
 */
async function waitingQueries(pattern: string, count: number, stop: () => boolean = () => false): Promise<void> {
  while (!stop()) {
    const waiting = await sql(
      testUrl(),
      `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
      [pattern],
    )
    if (waiting.length >= count) return
    await new Promise((done) => setTimeout(done, 20))
  }
}

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

  it('a renewal that reaches the database after the release does not take the session back (a reopen right after a close is not LOCKED)', async () => {
    const id = uniqueId('late-renewal')
    const first = store(30_000)
    await first.release(await first.create(id, {}))
    const pool = new pg.Pool({ connectionString: testUrl() })
    try {
      // The renewal the holder's timer sent just before its release, arriving after it.
      const late = new SessionLease(pool, id, first.holder, '1', 30_000, 'test')
      expect(await late.renew()).toBe(false)
      expect(await SessionLease.current(pool, id)).toMatchObject({ token: '1', leftMs: 0 })
    } finally {
      await pool.end()
    }
    const reopened = await store().open(id, {}, () => {})
    expect(reopened.length).toBe(0)
  })

  it('the holder of a released lease reads as expired, not as an error: a store opening while the holder closes takes the lease', async () => {
    const id = uniqueId('released')
    const first = store()
    await first.release(await first.create(id, {}))
    // A release sets expires_at to -infinity; subtracting it from now was an error ("cannot
    // subtract infinite timestamps") that an open racing the release used to fail with.
    expect(await sql(testUrl(), 'SELECT expires_at::text FROM warmfold_leases WHERE session_id = $1', [id])).toEqual([
      { expires_at: '-infinity' },
    ])
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
    await sql(
      testUrl(),
      `UPDATE warmfold_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = $1`,
      [id],
    )
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
    const rows = await sql<{ event: string }>(
      testUrl(),
      'SELECT event FROM warmfold_events WHERE session_id = $1 ORDER BY seq',
      [id],
    )
    expect(rows.map((row) => JSON.parse(row.event).data.message.id)).toEqual(['old-0', 'old-1', 'new-2'])
  })

  it("a takeover tried between a flush's lease check and its commit waits for the commit, and never misses a committed event", async () => {
    const id = uniqueId('window')
    const old = store()
    const session = await old.create(id, {})
    appendMessages(session, 2, 'old')
    await old.flush(session)
    appendMessages(session, 1, 'old')
    // Hold the session row, so the flush, past its lease check, waits in its INSERT (the
    // foreign-key check) before it can commit.
    const blocker = new pg.Client({ connectionString: testUrl() })
    await blocker.connect()
    const next = store()
    const takeover = { done: false }
    let taken: Promise<unknown> | undefined
    let flushed: Promise<unknown> | undefined
    try {
      await blocker.query('BEGIN')
      await blocker.query('SELECT 1 FROM warmfold_sessions WHERE session_id = $1 FOR UPDATE', [id])
      flushed = old.flush(session).then(
        () => 'flushed',
        (error: unknown) => error,
      )
      await waitingQueries('INSERT INTO warmfold_events%', 1)
      // Now the old holder pauses past its lease (a GC pause, a frozen VM) and another host
      // tries to take over. Both need the lease row, which the flush's check holds until its
      // commit: a check that let go of it before (or never took it) lets the takeover through
      // here, and the flush then commits behind the new holder's back.
      const expiry = { done: false }
      const expired = sql(
        testUrl(),
        `UPDATE warmfold_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE session_id = $1`,
        [id],
      ).finally(() => (expiry.done = true))
      await waitingQueries(
        'UPDATE warmfold_leases SET expires_at = clock_timestamp() - interval%',
        1,
        () => expiry.done,
      )
      taken = next
        .open(id, {}, () => {})
        .then(
          (opened) => opened,
          (error: unknown) => error,
        )
      void taken.finally(() => (takeover.done = true))
      await waitingQueries('INSERT INTO warmfold_leases%', 1, () => takeover.done)
      expect(expiry.done || takeover.done, 'the lease changed hands inside the flush transaction').toBe(false)
      await blocker.query('ROLLBACK')
      await expired
    } finally {
      await blocker.end()
    }
    expect(await flushed).toBe('flushed')
    const rows = await sql<{ event: string }>(
      testUrl(),
      'SELECT event FROM warmfold_events WHERE session_id = $1 ORDER BY seq',
      [id],
    )
    expect(rows.map((row) => JSON.parse(row.event).data.message.id)).toEqual(['old-0', 'old-1', 'old-2'])
    // After the commit the takeover goes on: it finds the lease the flush renewed (LOCKED), or,
    // when the expiry was written first, takes it over with every committed event.
    const outcome = await taken
    if (SessionError.isInstance(outcome)) expect(outcome.code).toBe('LOCKED')
    else expect((outcome as Session).length).toBe(3)
  })

  it('a flush extends the lease: its expiry moves to leaseMs from the commit', async () => {
    const id = uniqueId('extends')
    const writer = store(30_000)
    const session = await writer.create(id, {})
    // As if the lease were about to run out (its renewals every 10 s have not come yet).
    await sql(
      testUrl(),
      `UPDATE warmfold_leases SET expires_at = clock_timestamp() + interval '2 seconds' WHERE session_id = $1`,
      [id],
    )
    appendMessages(session, 1)
    await writer.flush(session)
    const [lease] = await sql<{ left_ms: number }>(
      testUrl(),
      `SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS left_ms FROM warmfold_leases WHERE session_id = $1`,
      [id],
    )
    // 30 s from the commit, minus the little time since: far above the 2 s it had.
    expect(Number(lease?.left_ms)).toBeGreaterThan(20_000)
  })

  it('kill -9 of a writer in the middle of a flush transaction leaves exactly the committed events', async () => {
    const id = uniqueId('kill9')
    const child = await writerProcess()
    expect(await ask<Reply>(child, { op: 'open', url: testUrl(), id, leaseMs: 500, create: true })).toMatchObject({
      ok: true,
    })
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
        const waiting = await sql(
          testUrl(),
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO warmfold_events%'`,
        )
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
    const lease = await sql<{ token: string; holder: string }>(
      testUrl(),
      'SELECT token, holder FROM warmfold_leases WHERE session_id = $1',
      [id],
    )
    expect(lease).toEqual([{ token: '2', holder: taker.holder }])
    appendMessages(session, 1)
    await taker.flush(session)
  })
})
