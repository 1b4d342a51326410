import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PostgresServer } from '@warmfold/test-utils'
import { startPostgres } from '@warmfold/test-utils'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MIGRATION_LOCK } from '../src/migrations.ts'
import { ask, forkWriter, sql, uniqueId } from './pg-fixtures.ts'

interface Reply {
  ok: boolean
  code?: string
  message?: string
}

// These tests take the server down, so they run on one of their own (started once for the file),
// never on the project's shared server that the other test files use at the same time. One host
// process (the `pg-writer` fixture, which like most hosts has no process-wide 'uncaughtException'
// handler) lives through all of them: the last one checks that it exits normally.
let server: PostgresServer
let host: ChildProcess
beforeAll(async () => {
  host = forkWriter()
  server = await startPostgres()
  // The host is ready once it answers (it starts through tsx meanwhile).
  await ask<Reply>(host, { op: 'ping' })
}, 60_000)
afterAll(async () => {
  host.kill('SIGKILL')
  await server.stop()
})

/** A new session the host holds, with 10 committed events. */
async function heldSession(): Promise<string> {
  const id = uniqueId('server-loss')
  expect(await ask<Reply>(host, { op: 'open', url: server.url, id, leaseMs: 1_000, create: true })).toMatchObject({
    ok: true,
  })
  await ask<Reply>(host, { op: 'append', count: 10 })
  expect(await ask<Reply>(host, { op: 'flush' })).toMatchObject({ ok: true })
  return id
}

/**
 * Appends 5 events to the session the host holds and flushes them while a connection of the test's holds the session's row
 * locked, so the flush waits inside its INSERT (the foreign-key check) until `whileFlushing` has
 * run; returns the host's answer to that flush.
 */
async function flushWhile(id: string, whileFlushing: (backendPid: number) => Promise<void>): Promise<Reply> {
  await ask<Reply>(host, { op: 'append', count: 5 })
  const blocker = new pg.Client({ connectionString: server.url })
  // The blocker's connection goes down with the server too: that must not fail this test process.
  blocker.on('error', () => {})
  await blocker.connect()
  try {
    await blocker.query('BEGIN')
    await blocker.query('SELECT 1 FROM warmfold_sessions WHERE session_id = $1 FOR UPDATE', [id])
    const reply = ask<Reply>(host, { op: 'flush' })
    await whileFlushing(await lockWaiter(blocker, 'INSERT INTO warmfold_events%'))
    return await reply
  } finally {
    await blocker.end().catch(() => {})
  }
}

/** The pid of the server backend whose query (`LIKE` `pattern`) waits for a lock `on`'s connection holds. */
async function lockWaiter(on: pg.Client, pattern: string): Promise<number> {
  for (;;) {
    if (host.exitCode !== null || host.signalCode !== null)
      throw new Error(`the host exited (${host.exitCode ?? host.signalCode}) before its query waited for the lock`)
    const waiting = await on.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1 AND pid <> pg_backend_pid()`,
      [pattern],
    )
    // pg_stat_activity is a snapshot per transaction: drop it so the next poll looks again.
    await on.query('SELECT pg_stat_clear_snapshot()')
    const pid = waiting.rows[0]?.pid
    if (pid !== undefined) return pid
    await new Promise((done) => setTimeout(done, 20))
  }
}

/** Terminates server backend `backendPid` (`pg_terminate_backend`, what a fast shutdown does to each). */
async function terminate(backendPid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  try {
    await admin.query('SELECT pg_terminate_backend($1)', [backendPid])
  } finally {
    await admin.end()
  }
}

/** Terminates every other client connection to the test database and waits until they are gone. */
async function terminateOthers(): Promise<void> {
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  const others = `FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`
  try {
    await admin.query(`SELECT pg_terminate_backend(pid) ${others}`)
    while ((await admin.query(`SELECT pid ${others}`)).rowCount !== 0) {
      await admin.query('SELECT pg_stat_clear_snapshot()')
      await new Promise((done) => setTimeout(done, 20))
    }
  } finally {
    await admin.end()
  }
}

/** Closes the host's store and ends it; resolves with how it exited (0 when it survived everything). */
async function closeAndExit(): Promise<{ code: number | null; signal: string | null }> {
  expect(await ask<Reply>(host, { op: 'close' })).toMatchObject({ ok: true })
  const exited = once(host, 'exit')
  host.disconnect()
  const [code, signal] = (await exited) as [number | null, string | null]
  return { code, signal }
}

describe('PostgreSQL store when the server goes away during a flush', () => {
  it('a flush whose connection the server terminates rejects with IO, and the host process without an uncaughtException handler lives on', async () => {
    const id = await heldSession()
    // First its idle pooled connections go (the pool's own 'error'): the next flush connects again.
    await terminateOthers()
    await ask<Reply>(host, { op: 'append', count: 1 })
    expect(await ask<Reply>(host, { op: 'flush' })).toMatchObject({ ok: true })
    const reply = await flushWhile(id, terminate)
    expect(reply).toMatchObject({ ok: false, code: 'IO' })
    expect(reply.message).toContain('terminating connection due to administrator command')
    // Exactly the acknowledged events are stored: the 11 before, none of the failed flush.
    expect(await sql(server.url, 'SELECT seq FROM warmfold_events WHERE session_id = $1', [id])).toHaveLength(11)
    // The session is refused from here on (the flush was not acknowledged), the host is not.
    expect(await ask<Reply>(host, { op: 'flush' })).toMatchObject({ ok: false, code: 'CLOSED' })
  })

  it('migrate() whose connection the server terminates rejects naming the database, and the process lives on', async () => {
    const blocker = new pg.Client({ connectionString: server.url })
    await blocker.connect()
    try {
      // Hold the migration lock, so the host's migrate waits for it on the server.
      await blocker.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()])
      const reply = ask<Reply>(host, { op: 'migrate', url: server.url })
      await terminate(await lockWaiter(blocker, 'SELECT pg_advisory_xact_lock%'))
      expect(await reply).toMatchObject({
        ok: false,
        message: expect.stringContaining(
          `migrating the session schema at ${server.url} failed: terminating connection due to administrator command`,
        ),
      })
    } finally {
      await blocker.end()
    }
    // Its connection ended after the answer: the host still answers.
    expect(await ask<Reply>(host, { op: 'ping' })).toEqual({ ok: true })
  })

  // Last in the file: the server stays down.
  it('a server that dies (immediate shutdown) during a flush: the flush rejects with IO and the host process lives on', async () => {
    const id = await heldSession()
    const reply = await flushWhile(id, async () => {
      // The postmaster's pid is the first line of postmaster.pid; SIGQUIT is `pg_ctl stop -m
      // immediate`: every backend quits at once, without a checkpoint, as in a crash.
      const postmaster = Number(readFileSync(join(server.directory, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
      process.kill(postmaster, 'SIGQUIT')
    })
    expect(reply).toMatchObject({ ok: false, code: 'IO' })
    expect(reply.message).toMatch(
      /^flush session server-loss-\w+ events 10\.\.14 at postgres:\/\/postgres@127\.0\.0\.1:\d+\/warmfold_test failed: /,
    )
    expect(await ask<Reply>(host, { op: 'flush' })).toMatchObject({ ok: false, code: 'CLOSED' })
    // The host survived all of this file's tests, and ends normally.
    expect(await closeAndExit()).toEqual({ code: 0, signal: null })
  })
})
