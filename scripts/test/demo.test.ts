import type { ChildProcess } from 'node:child_process'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { PostgresServer } from '@warmfold/test-utils'
import { startPostgres } from '@warmfold/test-utils'
import { runCli } from '@warmfold/cli'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'

// `pnpm demo` is `tsx scripts/demo.ts`: run the same file in its own process, with a temp
// directory of its own, so what it leaves behind can be listed.

const root = resolve(import.meta.dirname, '../..')

let temp: string
beforeEach(async () => {
  temp = await mkdtemp(join(tmpdir(), 'warmfold-demo-test-'))
})
afterEach(async () => {
  await rm(temp, { recursive: true, force: true })
})

function node(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', ...args],
      { cwd: root, env: { ...process.env, TMPDIR: temp }, timeout: 60_000 },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
      },
    )
  })
}

async function sql(url: string, text: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

async function demoFolders(): Promise<string[]> {
  return (await readdir(temp)).filter((name) => name.startsWith('warmfold-demo-'))
}

describe('pnpm demo', () => {
  it('shows a background compaction whose summary call replays the conversation while the agent goes on, and removes its temporary folder', async () => {
    const { code, stdout, stderr } = await node(['scripts/demo.ts'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const lines = stdout.split('\n')
    const requests = lines.flatMap((line, index) =>
      line.startsWith('→ ') ? [[line, lines[index + 1] ?? ''] as const] : [],
    )
    // The first request has no previous one: it says so instead of claiming a kept prefix.
    expect(requests[0]![1]).toMatch(
      /^ {2}1 message\(s\), about \d+ tokens, first request of the session, nothing cached yet; last: The add test fails/,
    )
    expect(stdout).not.toContain('kept as prefix')
    // One compaction, with what its summary call sent: the conversation as a prefix, then the instruction.
    expect(stdout).toMatch(
      /^✂ compaction \(background\): the next request, about \d+ tokens, nears the 2520-token threshold .*; its summary call runs beside the conversation/m,
    )
    // The summary call goes out before the conversation request that follows it, and the checkpoint lands after that request.
    const order = lines
      .filter((line) => line.startsWith('→ ') || line.startsWith('✂ its first'))
      .map((line) => (line.startsWith('→ compaction') ? 'summary' : line.startsWith('✂') ? 'swap' : 'conversation'))
    expect(order.slice(order.indexOf('summary'), order.indexOf('summary') + 3)).toEqual([
      'summary',
      'conversation',
      'swap',
    ])
    const summary = requests.filter(([line]) => line.startsWith('→ compaction request'))
    expect(summary).toHaveLength(1)
    expect(summary[0]![0]).toContain('effort=max')
    expect(summary[0]![1]).toMatch(
      /replays the last conversation request as its prefix: yes \(same system prompt, tools and effort, its first \d+ of \d+ messages byte for byte/,
    )
    expect(stdout).toMatch(
      /then 1 new message, the instruction \(about \d+ tokens\): "You are now acting as the context compaction step/,
    )
    expect(stdout).toMatch(/^✂ its first \d+ messages \(about \d+ tokens\) are replaced by one checkpoint message:$/m)
    // Every other request extends the previous one, except the one right after the checkpoint.
    const conversation = requests.filter(([line]) => line.startsWith('→ conversation request')).slice(1)
    expect(
      conversation.map(
        ([, detail]) => /extends the previous request(?: \(a cache hit on all of it\))?: (yes|no)/.exec(detail)?.[1],
      ),
    ).toEqual(['yes', 'yes', 'no', 'yes', 'yes'])
    expect(stdout).not.toMatch(/\bNO\b/)
    expect(stdout).toContain('; 1 compaction(s) committed')
    expect(stdout).toContain('messages byte-identical after reopen: yes')
    const [, folder] = /^session log: (.*)\/demo\.jsonl \(a temporary folder/m.exec(stdout) ?? []
    expect(folder?.startsWith(join(temp, 'warmfold-demo-'))).toBe(true)
    expect(await demoFolders()).toEqual([])
  }, 60_000)

  it("keeps a folder the user names, whose log warmfold report reads with the cache ledger's numbers: every request, its cache use and the fold", async () => {
    const folder = join(temp, 'kept')
    const { code, stdout } = await node(['scripts/demo.ts', folder])
    expect(code).toBe(0)
    const log = join(folder, 'demo.jsonl')
    expect(stdout.split('\n')[0]).toBe(`session log: ${log}`)
    expect(stdout).toContain(
      `every request's cache use, as the cache ledger logged it: npx -y pnpm@12.4.2 warmfold report ${log}\n`,
    )
    expect(await readdir(folder)).toContain('demo.jsonl')
    expect(await demoFolders()).toEqual([])

    // The report, in this process: one request per request the demo printed, with tokens from the ledger.
    let report = ''
    expect(
      await runCli(['report', log], {
        stdout: (text) => void (report += text),
        stderr: (text) => void (report += text),
      }),
    ).toBe(0)
    const sent = stdout.split('\n').filter((line) => line.startsWith('→ '))
    expect(report).toContain('(session demo), numbers from the cache ledger')
    expect(report).toContain(`requests  ${sent.length}: ${sent.length - 1} conversation, 1 compaction\n`)
    const [, cached, prefilled, output] =
      /^prompt {4}[\d,]+ tokens: ([\d,]+) cached \([\d.]+%\), ([\d,]+) prefilled .*\noutput {4}([\d,]+) tokens$/m.exec(
        report,
      ) ?? []
    for (const count of [cached, prefilled, output]) expect(Number(count?.replaceAll(',', ''))).toBeGreaterThan(0)
    expect(report).toContain('rewrites  1 fold(s)')
    // The request after the checkpoint pays for it: a break the ledger attributes to the fold.
    expect(report).toMatch(
      /^ {2}#\d+ {2}line \d+ {2}conversation {2}fold {2}[\d,]+: a fold replaced old history with a checkpoint/m,
    )
    expect(report).not.toContain('no usage')
  }, 60_000)

  it('--store sqlite:PATH keeps the session in the SQLite store and reopens it from there', async () => {
    const path = join(temp, 'sessions.db')
    const { code, stdout, stderr } = await node(['scripts/demo.ts', '--store', `sqlite:${path}`])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout.split('\n')[0]).toBe(`session store: sqlite:${path}`)
    expect(stdout).toMatch(
      new RegExp(
        `^wrote \\d+ events to session demo in sqlite:${path.replaceAll('/', '\\/')}; 1 compaction\\(s\\) committed$`,
        'm',
      ),
    )
    expect(stdout).toContain('messages byte-identical after reopen: yes')
    expect(await readdir(temp)).toContain('sessions.db')
    // Nothing went to a JSONL folder.
    expect(await demoFolders()).toEqual([])
    const unknown = await node(['scripts/demo.ts', '--store', 'redis:x'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain('--store must be file:DIR | sqlite:PATH | postgres:URL, got "redis:x"')
  }, 60_000)
})

describe('pnpm demo --store postgres:URL', () => {
  let server: PostgresServer
  beforeAll(async () => {
    server = await startPostgres()
  }, 60_000)
  afterAll(() => server?.stop())

  it('keeps the session in PostgreSQL, reopens it from there and exits; a second run is refused before it runs', async () => {
    // The test server trusts local connections: the password is only here to be redacted.
    const url = server.url.replace('postgres@', 'postgres:hunter2@')
    const shown = `postgres:${url.replace('hunter2', '***')}`
    const { code, stdout, stderr } = await node(['scripts/demo.ts', '--store', `postgres:${url}`])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout.split('\n')[0]).toBe(`session store: ${shown}`)
    const written = Number(
      new RegExp(
        `^wrote (\\d+) events to session demo in ${shown.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}; 1 compaction\\(s\\) committed$`,
        'm',
      ).exec(stdout)?.[1],
    )
    expect(written).toBeGreaterThan(0)
    expect(stdout).toContain(`reopened ${written} events in a fresh Context`)
    expect(stdout).toContain('messages byte-identical after reopen: yes')
    expect(stdout).not.toContain('hunter2')
    const rows = await sql(server.url, "SELECT count(*)::int AS n FROM warmfold_events WHERE session_id = 'demo'")
    expect(rows).toEqual([{ n: written }])

    const again = await node(['scripts/demo.ts', '--store', `postgres:${url}`])
    expect(again.code).toBe(2)
    expect(again.stderr.trim()).toBe(
      `pnpm demo: --store ${shown} already holds session(s) demo; use another store or remove them`,
    )
    expect(await sql(server.url, "SELECT count(*)::int AS n FROM warmfold_events WHERE session_id = 'demo'")).toEqual([
      { n: written },
    ])
  }, 120_000)
})

describe("the demo's temporary folder", () => {
  it('is removed when the demo fails', async () => {
    const { code, stdout, stderr } = await node(['scripts/test/fixtures/hold-demo-folder.ts', 'throw'])
    expect(code).toBe(1)
    expect(stderr).toContain('the demo failed')
    expect(stdout.trim().startsWith(join(temp, 'warmfold-demo-'))).toBe(true)
    expect(await demoFolders()).toEqual([])
  }, 60_000)

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'is removed on %s, exiting %i',
    async (signal, exitCode) => {
      const child: ChildProcess = spawn(
        process.execPath,
        ['--import', 'tsx', 'scripts/test/fixtures/hold-demo-folder.ts', 'wait'],
        { cwd: root, env: { ...process.env, TMPDIR: temp } },
      )
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
      // The path is printed once the folder exists and the handlers are installed.
      const printed = await new Promise<string>((done) =>
        child.stdout!.once('data', (chunk: Buffer) => done(chunk.toString())),
      )
      expect(await demoFolders()).toHaveLength(1)
      expect(printed.trim().startsWith(join(temp, 'warmfold-demo-'))).toBe(true)
      child.kill(signal)
      expect(await exited).toBe(exitCode)
      expect(await demoFolders()).toEqual([])
    },
    60_000,
  )
})
