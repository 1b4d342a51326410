import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { SessionStore } from '@warmfold/session'
import { sqliteSessionStore } from '@warmfold/session-store-sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/index.ts'
import { expectBenchSessions } from './support/expect-bench-sessions.ts'
import { cli } from './run-cli.ts'

let directory: string

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-keep-sessions-'))
})

afterAll(async () => {
  await rm(directory, { recursive: true, force: true })
})

describe('warmfold bench --keep-sessions DIR', () => {
  it("writes each run's whole session as DIR/<strategy>-<window>.jsonl, which the session store reopens and warmfold report reads", async () => {
    const sessions = join(directory, 'kept')
    await mkdir(sessions)
    const result = await cli([
      'bench',
      '--json',
      '--windows',
      '4800,6000',
      '--steps',
      '24',
      '--strategies',
      'warmfold,legacy',
      '--keep-sessions',
      sessions,
    ])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as BenchReport
    expect((await readdir(sessions)).toSorted()).toEqual([
      'legacy-4800.jsonl',
      'legacy-6000.jsonl',
      'warmfold-4800.jsonl',
      'warmfold-6000.jsonl',
    ])
    const ctx = new Context()
    await ctx.start()
    try {
      ctx.plugin(SessionStore, { store: 'file', directory: sessions })
      for (const run of report.runs) {
        const id = `${run.strategy}-${run.window}`
        expect(result.stderr).toContain(`strategy ${run.strategy}: ${run.summaryCalls.length} fold(s)`)
        expect(result.stderr).toContain(`session log ${join(sessions, `${id}.jsonl`)}`)
        const session = await ctx.sessions.open(id)
        const count = (type: string) => session.events.filter((event) => event.type === type).length
        // The whole run is in the log: every reply of the conversation, every fold, the end of the turn.
        expect(count('assistant/message')).toBe(run.conversationRequests)
        expect(count('compaction/summary')).toBe(run.summaryCalls.length)
        expect(session.events.at(-1)?.type).toBe('turn/end')
        const text = await cli(['report', join(sessions, `${id}.jsonl`)])
        expect(text.code).toBe(0)
        expect(text.stdout).toContain(
          `requests  ${run.conversationRequests + run.summaryCalls.length}: ${run.conversationRequests} conversation, ${run.summaryCalls.length} compaction`,
        )
        expect(text.stdout).toContain(`rewrites  ${run.summaryCalls.length} fold(s)`)
      }
    } finally {
      await ctx.stop()
    }
    // Four bench runs and four reports: about 2 s alone, more than vitest's default 5 s on a busy 2-core machine.
  }, 30_000)

  it('is checked before anything runs: a missing folder, a file, an existing log, a run named twice', async () => {
    const missing = join(directory, 'missing')
    const cases: Array<[string[], string]> = [
      [
        ['--keep-sessions', missing],
        `--keep-sessions ${JSON.stringify(missing)}: the folder ${missing} does not exist (warmfold bench does not create folders; create it first)`,
      ],
      [['--keep-sessions', ''], '--keep-sessions must name a folder, got ""'],
      [['--keep-sessions'], '--keep-sessions needs a value'],
    ]
    const file = join(directory, 'a-file')
    await writeFile(file, 'x')
    cases.push([['--keep-sessions', file], `--keep-sessions ${JSON.stringify(file)}: ${file} is not a folder`])
    const used = join(directory, 'used')
    await mkdir(used)
    await writeFile(join(used, 'legacy-4800.jsonl'), '')
    cases.push([
      ['--keep-sessions', used],
      `--keep-sessions: ${join(used, 'legacy-4800.jsonl')} exists already (a kept session log is never overwritten); move it away or choose another folder`,
    ])
    cases.push([
      ['--keep-sessions', join(directory, 'kept-twice'), '--windows', '4800,4800'],
      `--keep-sessions: two runs would write ${join(directory, 'kept-twice', 'warmfold-4800.jsonl')} (a window or strategy is listed twice)`,
    ])
    await mkdir(join(directory, 'kept-twice'))
    for (const [flags, message] of cases) {
      const result = await cli([
        'bench',
        '--windows',
        '4800',
        '--steps',
        '12',
        '--strategies',
        'warmfold,legacy',
        ...flags,
      ])
      expect(result.code, flags.join(' ')).toBe(2)
      expect(result.stderr).toContain(message)
      // Refused before the first run: no progress line, nothing on stdout.
      expect(result.stderr).not.toContain('[1/')
      expect(result.stdout).toBe('')
    }
    expect(await readdir(used)).toEqual(['legacy-4800.jsonl'])
    expect(await readdir(join(directory, 'kept-twice'))).toEqual([])
  })
})

describe('warmfold bench --store sqlite:PATH', () => {
  it("keeps each run's whole session in the SQLite store, and refuses a store that already holds one before running", async () => {
    const path = join(directory, 'sessions.db')
    const result = await cli([
      'bench',
      '--json',
      '--windows',
      '4800',
      '--steps',
      '24',
      '--strategies',
      'warmfold,legacy',
      '--store',
      `sqlite:${path}`,
    ])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as BenchReport
    expect(report.runs.map((run) => `${run.strategy}-${run.window}`)).toEqual(['warmfold-4800', 'legacy-4800'])
    await expectBenchSessions(sqliteSessionStore({ path }), report, result.stderr, `sqlite:${path}`)
    const again = await cli([
      'bench',
      '--windows',
      '4800',
      '--steps',
      '24',
      '--strategies',
      'warmfold',
      '--store',
      `sqlite:${path}`,
    ])
    expect(again.code).toBe(2)
    expect(again.stderr).toContain(
      `--store sqlite:${path} already holds session(s) warmfold-4800; use another store or remove them`,
    )
    expect(again.stderr).not.toContain('[1/1]')
  })

  it.each([
    [['--store', 'mysql://db'], '--store must be file:DIR | sqlite:PATH | postgres:URL, got "mysql://db"'],
    [
      ['--store', 'postgres:http://user:hunter2@db/x'],
      '--store must be file:DIR | sqlite:PATH | postgres:URL, got "postgres:http://user:***@db/x"',
    ],
    [['--store', 'file:a', '--keep-sessions', 'b'], '--keep-sessions DIR and --store are exclusive'],
  ])('refuses %j naming the flag, never a password', async (argv, message) => {
    const result = await cli(['bench', ...argv])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
    expect(result.stderr).not.toContain('hunter2')
  })
})
