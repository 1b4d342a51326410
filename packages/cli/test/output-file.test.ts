import { spawn, execFileSync } from 'node:child_process'
import { constants } from 'node:fs'
import { mkdtemp, open, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { Context } from '@cordisjs/core'
import { createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli } from './run-cli.ts'

const root = resolve(import.meta.dirname, '../../..')
let directory: string
let sessionLog: string
let requestLog: string

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-output-file-'))
  // A small session log with one observed request, written by the session file store.
  const ctx = new Context()
  await ctx.start()
  try {
    ctx.plugin(SessionStore, { store: 'file', directory })
    const session = await ctx.sessions.create('small')
    session.append('user/message', { message: createUserMessage('hello') }, 'append')
    session.append('cache/observation', {
      purpose: 'conversation',
      provider: 'p',
      model: 'm',
      cached: 0,
      written: 10,
      output: 2,
      chars: 40,
      expected: 0,
      divergence: { part: 'first' },
      cause: 'none',
      idleMs: null,
      finish: 'stop',
    })
    await ctx.sessions.flush(session)
  } finally {
    await ctx.stop()
  }
  sessionLog = join(directory, 'small.jsonl')
  // A request log whose HTML page (about 110 KB) is larger than a pipe's buffer (64 KB).
  requestLog = join(directory, 'requests.jsonl')
  await writeFile(
    requestLog,
    Array.from({ length: 300 }, (_, index) =>
      JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `hello ${index}` }] }),
    ).join('\n'),
  )
})
afterAll(() => rm(directory, { recursive: true, force: true }))

describe('an output file that is the input', () => {
  it('warmfold report LOG --out LOG, ./LOG or a symlink to it is refused with exit 2 naming both, and the log is untouched', async () => {
    const before = await readFile(sessionLog, 'utf8')
    const link = join(directory, 'link.jsonl')
    await symlink(sessionLog, link)
    const dotted = `./${relative(process.cwd(), sessionLog)}`
    for (const out of [sessionLog, dotted, link]) {
      const result = await cli(['report', sessionLog, '--out', out])
      expect(result.code).toBe(2)
      expect(result.stderr.trim()).toBe(
        `warmfold: --out ${JSON.stringify(out)} is the session log the report reads ${JSON.stringify(sessionLog)}: writing the HTML page there would overwrite it; name another file`,
      )
      expect(result.stdout).toBe('')
    }
    // Through --store file:DIR too.
    const viaStore = await cli(['report', '--store', `file:${directory}`, 'small', '--out', link])
    expect(viaStore.code).toBe(2)
    expect(viaStore.stderr).toContain(
      `is the session log the report reads ${JSON.stringify(join(directory, 'small.jsonl'))}`,
    )
    expect(await readFile(sessionLog, 'utf8')).toBe(before)
  })

  it('warmfold doctor LOG --html LOG is refused with exit 2 naming both, and the log is untouched', async () => {
    const before = await readFile(requestLog, 'utf8')
    const result = await cli(['doctor', requestLog, '--html', `${directory}/./requests.jsonl`])
    expect(result.code).toBe(2)
    expect(result.stderr.trim()).toBe(
      `warmfold: --html ${JSON.stringify(`${directory}/./requests.jsonl`)} is the request log doctor reads ${JSON.stringify(requestLog)}: writing the HTML page there would overwrite it; name another file`,
    )
    expect(await readFile(requestLog, 'utf8')).toBe(before)
  })

  it('warmfold bench --out onto the database of --store sqlite, or onto a session log --keep-sessions will write, is refused before the run', async () => {
    const database = join(directory, 'sessions.db')
    const sqlite = await cli([
      'bench',
      '--windows',
      '4800',
      '--steps',
      '4',
      '--strategies',
      'warmfold',
      '--store',
      `sqlite:${database}`,
      '--out',
      database,
    ])
    expect(sqlite.code).toBe(2)
    expect(sqlite.stderr.trim()).toBe(
      `warmfold: --out ${JSON.stringify(database)} is the SQLite database of --store ${JSON.stringify(database)}: writing the JSON document there would overwrite it; name another file`,
    )
    const kept = await cli([
      'bench',
      '--windows',
      '4800',
      '--steps',
      '4',
      '--strategies',
      'warmfold',
      '--keep-sessions',
      directory,
      '--out',
      join(directory, 'warmfold-4800.jsonl'),
    ])
    expect(kept.code).toBe(2)
    expect(kept.stderr).toContain('is a session log the run keeps')
    expect(sqlite.stdout + kept.stdout).toBe('')
  })
})

describe('an output file that is a FIFO', () => {
  it('is refused with exit 2 when no process reads it, before anything is read', async () => {
    const fifo = join(directory, 'nobody-reads')
    execFileSync('mkfifo', [fifo])
    const result = await cli(['report', sessionLog, '--out', fifo])
    expect(result.code).toBe(2)
    expect(result.stderr.trim()).toBe(
      `warmfold: --out ${JSON.stringify(fifo)} is a FIFO that no process is reading: writing it would wait for a reader forever; start the reader first, or name a regular file`,
    )
    expect((await cli(['doctor', requestLog, '--html', fifo])).code).toBe(2)
  })

  it('receives the whole page when a process reads it', async () => {
    const fifo = join(directory, 'read')
    execFileSync('mkfifo', [fifo])
    // A reader that is there before warmfold opens the FIFO, and one that reads the page to its end
    // (a read before any writer opened would see the end at once, so it opens waiting for the writer).
    const present = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const received = (async () => {
      const chunks: Buffer[] = []
      for await (const chunk of (await open(fifo, 'r')).createReadStream()) chunks.push(chunk as Buffer)
      return Buffer.concat(chunks).toString('utf8')
    })()
    const result = await cli(['doctor', requestLog, '--html', fifo])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const page = await received
    expect(page.length).toBeGreaterThan(64 * 1024)
    expect(page.startsWith('<!doctype html>')).toBe(true)
    expect(page.trimEnd().endsWith('</html>')).toBe(true)
    await present.close()
  })

  it('a reader that never reads stalls the write, and SIGTERM still ends warmfold (run as `pnpm warmfold` runs it, through the tsx command)', async () => {
    const fifo = join(directory, 'stuck')
    execFileSync('mkfifo', [fifo])
    const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      const child = spawn(
        join(root, 'node_modules/.bin/tsx'),
        ['packages/cli/src/main.ts', 'doctor', requestLog, '--html', fifo],
        { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
      )
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        child.once('exit', (code, signal) => done({ code, signal })),
      )
      // The report is printed on stdout before the page is written: then the write is under way.
      await new Promise<void>((done) =>
        child.stdout.on(
          'data',
          (chunk: Buffer) => void (chunk.toString().includes('--json or --html lists each one') && done()),
        ),
      )
      child.kill('SIGTERM')
      const { code, signal } = await exited
      expect(signal === 'SIGTERM' || code === 143).toBe(true)
    } finally {
      await reader.close()
    }
  }, 60_000)
})
