import type { ChildProcess } from 'node:child_process'
import { fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import { createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionError } from '@warmfold/session'
import pg from 'pg'
import { inject } from 'vitest'
import type { PostgresSessionBackend } from '../src/index.ts'

/** The URL of the database the global setup created. */
export function testUrl(): string {
  return inject('postgresUrl')
}

/** A session id no other test file uses (they share one database). */
export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`
}

/** Runs `sql` on a fresh connection to `url`. */
export async function sql<Row extends pg.QueryResultRow>(
  url: string,
  text: string,
  values?: unknown[],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<Row>(text, values)).rows
  } finally {
    await client.end()
  }
}

/** A new empty database on the test server, for migration tests; returns its URL. */
export async function freshDatabase(): Promise<string> {
  const name = `warmfold_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  await sql(testUrl(), `CREATE DATABASE ${name}`)
  const url = new URL(testUrl())
  url.pathname = `/${name}`
  return url.toString()
}

/** Appends `count` user messages whose text says who wrote them. */
export function appendMessages(session: Session, count: number, writer = 'w'): void {
  for (let index = 0; index < count; index++) {
    session.append(
      'user/message',
      { message: createUserMessage(`${writer} ${session.length}`, `${writer}-${session.length}`) },
      'append',
    )
  }
}

/** Awaits `promise` and returns the `SessionError` it rejects with (fails if it resolves). */
export async function sessionError(promise: Promise<unknown>): Promise<SessionError> {
  try {
    await promise
  } catch (error) {
    if (SessionError.isInstance(error)) return error
    throw error
  }
  throw new Error('expected a SessionError, but the call succeeded')
}

/**
 * Opens `id` once the lease of a crashed holder has expired: `LOCKED` is retried until then.
 * The test controls both sides (the dead holder's `leaseMs`), so this ends.
 */
export async function openAfterExpiry(store: PostgresSessionBackend, id: string): Promise<Session> {
  for (;;) {
    try {
      return await store.open(id, {}, () => {})
    } catch (error) {
      if (!SessionError.isInstance(error) || error.code !== 'LOCKED') throw error
      await new Promise((done) => setTimeout(done, 50))
    }
  }
}

const ROOT = resolve(import.meta.dirname, '../../../..')

/** A child process running `fixtures/pg-writer.ts` (commands over IPC). */
export function forkWriter(): ChildProcess {
  return fork(resolve(import.meta.dirname, 'fixtures/pg-writer.ts'), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
}

/** Sends `message` to `child` and resolves with its next reply. */
export function ask<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((done, fail) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      fail(
        new Error(
          `child ${child.pid} exited with ${child.exitCode ?? child.signalCode} before it was asked ${JSON.stringify(message)}`,
        ),
      )
      return
    }
    const onExit = (code: number | null) =>
      fail(new Error(`child ${child.pid} exited with ${code} before it answered ${JSON.stringify(message)}`))
    child.once('exit', onExit)
    child.once('message', (reply) => {
      child.off('exit', onExit)
      done(reply as T)
    })
    child.send(message as never)
  })
}
