import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { sqliteSessionStore } from '@warmfold/session-store-sqlite'
import Database from 'libsql'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reportBody } from './support/report-body.ts'
import { cli } from './run-cli.ts'

const BENCH = ['bench', '--json', '--windows', '4800', '--steps', '24', '--strategies', 'warmfold,legacy']
let directory: string
let path: string
let kept: string

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-report-store-'))
  path = join(directory, 'sessions.db')
  kept = join(directory, 'kept')
  await mkdir(kept)
  // The same scripted runs twice: once into the SQLite store, once as JSONL files.
  expect((await cli([...BENCH, '--store', `sqlite:${path}`])).code).toBe(0)
  expect((await cli([...BENCH, '--keep-sessions', kept])).code).toBe(0)
}, 120_000)
afterAll(() => rm(directory, { recursive: true, force: true }))

describe('warmfold report --store', () => {
  it('sqlite:PATH ID reports the same requests, breaks and totals as the JSONL log of the same run, and says where it read', async () => {
    for (const id of ['warmfold-4800', 'legacy-4800']) {
      const fromStore = await cli(['report', '--store', `sqlite:${path}`, id])
      const fromFile = await cli(['report', join(kept, `${id}.jsonl`)])
      expect(fromStore.code).toBe(0)
      expect(fromStore.stdout.split('\n')[0]).toBe(
        `warmfold report: sqlite:${path} (session ${id}), numbers from the cache ledger`,
      )
      expect(fromStore.stdout).toContain(
        `  - Read from the session store sqlite:${path}: log line N is the event with seq N − 1`,
      )
      expect(reportBody(fromStore.stdout)).toBe(reportBody(fromFile.stdout))
    }
    // warmfold's folds are audited: the section is read from the database as from the file.
    const audited = await cli(['report', '--store', `sqlite:${path}`, 'warmfold-4800'])
    expect(audited.stdout).toMatch(
      /\n\nFold audit \(\d+ fold\(s\); artifacts of the folded region the model still reads, verbatim\):\n {2}line \d+, after request #\d+: kept /,
    )
    // file:DIR ID is DIR/ID.jsonl.
    const viaFileStore = await cli(['report', '--store', `file:${kept}`, 'legacy-4800'])
    expect(viaFileStore.stdout).toBe((await cli(['report', join(kept, 'legacy-4800.jsonl')])).stdout)
  })

  it('reads a session a running host holds, without taking it: the host flushes on, and the report shows what was flushed', async () => {
    const ctx = new Context()
    await ctx.start()
    try {
      ctx.plugin(SessionStore, { store: sqliteSessionStore({ path }) })
      const held = await ctx.sessions.open('legacy-4800')
      const flushedLength = held.length
      held.append('user/message', { message: createUserMessage('one more turn, not flushed yet', 'later') }, 'append')
      const before = await cli(['report', '--store', `sqlite:${path}`, 'legacy-4800'])
      expect(before.code).toBe(0)
      expect(reportBody(before.stdout)).toBe(
        reportBody((await cli(['report', join(kept, 'legacy-4800.jsonl')])).stdout),
      )
      expect((await ctx.sessions.read('legacy-4800')).length).toBe(flushedLength)
      await ctx.sessions.flush(held)
      expect((await ctx.sessions.read('legacy-4800')).length).toBe(flushedLength + 1)
      await ctx.sessions.close(held)
    } finally {
      await ctx.stop()
    }
  })

  it('an SQLite database given as a session log is named for what it is, with the command that reads it, not a JSON parse error', async () => {
    const result = await cli(['report', path])
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      `warmfold: ${JSON.stringify(path)} is an SQLite database, not a JSONL session log: use warmfold report --store sqlite:${path} SESSION_ID\n`,
    )
    expect(result.stdout).toBe('')
  })

  it('refuses what it cannot read, naming it: exit 2 for no such store, session or id, exit 1 for a corrupt row', async () => {
    const missing = await cli(['report', '--store', `sqlite:${path}`, 'nope-1'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(`--store sqlite:${path}: session nope-1 does not exist in ${path}`)
    const noStore = join(directory, 'absent', 'sessions.db')
    const absent = await cli(['report', '--store', `sqlite:${noStore}`, 'warmfold-4800'])
    expect(absent.code).toBe(2)
    expect(absent.stderr).toContain(`there is no SQLite session store at ${noStore}`)
    expect((await cli(['report', '--store', `file:${kept}`, '../kept/legacy-4800'])).stderr).toContain(
      'session id "../kept/legacy-4800" is not one a store gives',
    )
    expect((await cli(['report', '--store', `sqlite:${path}`])).stderr).toContain(
      `warmfold report --store reads one session: warmfold report --store sqlite:${path} SESSION_ID`,
    )
    expect((await cli(['report', '--store', 'redis:x', 'a'])).stderr).toContain(
      '--store must be file:DIR | sqlite:PATH | postgres:URL, got "redis:x"',
    )

    const db = new Database(path)
    db.prepare("UPDATE events SET event = '{\"seq\":' WHERE session_id = 'warmfold-4800' AND seq = 7").run()
    db.close()
    const corrupt = await cli(['report', '--store', `sqlite:${path}`, 'warmfold-4800'])
    expect(corrupt.code).toBe(1)
    expect(corrupt.stderr).toContain(
      `cannot report session warmfold-4800 from --store sqlite:${path}: ${path}: session warmfold-4800, events row seq 7:`,
    )
    expect(corrupt.stdout).toBe('')
  })
})
