import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { postgresSessionStore } from '@warmfold/session-store-postgres'
import type { PostgresServer } from '@warmfold/test-utils'
import { startPostgres } from '@warmfold/test-utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BenchReport } from '../src/index.ts'
import { expectBenchSessions } from './support/expect-bench-sessions.ts'
import { reportBody } from './support/report-body.ts'

const ROOT = resolve(import.meta.dirname, '../../..')
const MAIN = resolve(import.meta.dirname, '../src/main.ts')

/** `warmfold ARGS` in a process of its own, as a user runs it: it must also exit by itself. */
function warmfold(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, ...args],
      { cwd: ROOT, timeout: 120_000 },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
      },
    )
  })
}

let server: PostgresServer
beforeAll(async () => {
  server = await startPostgres()
}, 60_000)
afterAll(() => server?.stop())

describe('warmfold bench --store postgres:URL', () => {
  it(
    "keeps each run's whole session in PostgreSQL, which warmfold report --store reads, never prints the password, and refuses a store that already holds one before running",
    { timeout: 240_000 },
    async () => {
      // The test server trusts local connections, so the password is ignored by it: it is here to be redacted.
      const url = server.url.replace('postgres@', 'postgres:hunter2@')
      const shown = `postgres:${url.replace('hunter2', '***')}`
      const result = await warmfold([
        'bench',
        '--json',
        '--windows',
        '4800',
        '--steps',
        '24',
        '--strategies',
        'warmfold,legacy',
        '--store',
        `postgres:${url}`,
      ])
      expect(result.stderr).not.toContain('hunter2')
      expect(result.code).toBe(0)
      const report = JSON.parse(result.stdout) as BenchReport
      expect(report.runs.map((run) => `${run.strategy}-${run.window}`)).toEqual(['warmfold-4800', 'legacy-4800'])

      const store = postgresSessionStore({ url })
      try {
        await expectBenchSessions(store, report, result.stderr, shown)
      } finally {
        await store.close()
      }

      // warmfold report reads the session from the database: the same numbers as the JSONL log of the same run.
      const kept = await mkdtemp(join(tmpdir(), 'warmfold-pg-kept-'))
      try {
        expect(
          (
            await warmfold([
              'bench',
              '--windows',
              '4800',
              '--steps',
              '24',
              '--strategies',
              'warmfold',
              '--keep-sessions',
              kept,
            ])
          ).code,
        ).toBe(0)
        const fromDb = await warmfold(['report', '--store', `postgres:${url}`, 'warmfold-4800'])
        expect(fromDb.code).toBe(0)
        expect(fromDb.stdout.split('\n')[0]).toBe(
          `warmfold report: ${shown} (session warmfold-4800), numbers from the cache ledger`,
        )
        expect(fromDb.stdout + fromDb.stderr).not.toContain('hunter2')
        const fromFile = await warmfold(['report', join(kept, 'warmfold-4800.jsonl')])
        expect(reportBody(fromDb.stdout)).toBe(reportBody(fromFile.stdout))
        // The fold audit section too: read from the database as from the file.
        expect(fromDb.stdout).toMatch(
          /\n\nFold audit \(\d+ fold\(s\); artifacts of the folded region the model still reads, verbatim\):\n {2}line \d+, after request #\d+: kept /,
        )
      } finally {
        await rm(kept, { recursive: true, force: true })
      }

      const again = await warmfold([
        'bench',
        '--windows',
        '4800',
        '--steps',
        '24',
        '--strategies',
        'warmfold',
        '--store',
        `postgres:${url}`,
      ])
      expect(again.code).toBe(2)
      expect(again.stderr).toContain(
        `--store ${shown} already holds session(s) warmfold-4800; use another store or remove them`,
      )
      expect(again.stderr).not.toContain('[1/1]')
      expect(again.stderr).not.toContain('hunter2')

      const unreachable = await warmfold([
        'bench',
        '--windows',
        '4800',
        '--steps',
        '24',
        '--strategies',
        'warmfold',
        '--store',
        url.replace(/\/[^/]+$/, '/no_such_db'),
      ])
      expect(unreachable.code).toBe(2)
      expect(unreachable.stderr).toContain('cannot list its sessions')
      expect(unreachable.stderr).toContain('database "no_such_db" does not exist')
      expect(unreachable.stderr).not.toContain('hunter2')
    },
  )
})
