import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { createUserMessage } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionReport } from '../src/index.ts'
import { parseBenchArgs } from '../src/index.ts'
import { cli } from './run-cli.ts'

// The files a flag names (`--latency`, `--price`) and the logs the commands read, as editors and
// shells really leave them: with a byte order mark, as UTF-16, padded past any profile's size.
// FIFOs and /dev/zero, which would block an in-process run, are in flag-files-process.test.ts.

const BOM = '\uFEFF'
const LATENCY =
  '{ "ttftMs": 400, "prefillTokensPerSecond": 8000, "cachedTokensPerSecond": 120000, "decodeTokensPerSecond": 60 }'
const PRICE = '{ "cacheRead": 0.25, "cacheWrite": 1, "output": 3, "usdPerMillionInput": null }'

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-flag-files-'))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

async function file(name: string, content: string | Buffer): Promise<string> {
  const path = join(directory, name)
  await writeFile(path, content)
  return path
}

describe('a file a flag names', () => {
  it('--latency and --price read a file that starts with a UTF-8 byte order mark', async () => {
    const latency = await file('bom-latency.json', `${BOM}${LATENCY}`)
    const price = await file('bom-price.json', `${BOM}${PRICE}`)
    const args = parseBenchArgs(['--latency', latency, '--price', price])
    expect(args.latency).toMatchObject({ name: latency, ttftMs: 400, decodeTokensPerSecond: 60 })
    expect(args.price).toMatchObject({ cacheRead: 0.25, cacheWrite: 1, output: 3 })
  })

  it('a UTF-16 file is refused naming the file and the encoding, not quoting unreadable characters', async () => {
    const utf16 = await file('utf16.json', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(LATENCY, 'utf16le')]))
    const result = await cli(['bench', '--latency', utf16])
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      `warmfold: --latency ${JSON.stringify(utf16)} is not UTF-8 text (it starts with a UTF-16 byte order mark?); ` +
        'save it as UTF-8\n',
    )
  })

  it('a file larger than a mebibyte is refused before it is parsed, naming the file and its size', async () => {
    // Valid JSON all the same: whitespace before the object.
    const padded = await file('padded.json', `${' '.repeat(2 * 1024 * 1024)}${PRICE}`)
    for (const argv of [
      ['bench', '--price', padded],
      ['report', 'any.jsonl', '--price', padded],
    ]) {
      const result = await cli(argv)
      expect(result.code).toBe(2)
      expect(result.stderr).toBe(
        `warmfold: --price ${JSON.stringify(padded)} is larger than 1048576 bytes (it has ${2 * 1024 * 1024 + PRICE.length}); ` +
          'name the JSON file itself\n',
      )
    }
  })
})

describe('a log that starts with a UTF-8 byte order mark', () => {
  it('warmfold doctor reads its first request', async () => {
    const log = await file(
      'requests.jsonl',
      `${BOM}${JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] })}\n`,
    )
    const result = await cli(['doctor', log, '--json'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as { totals: { requests: number }; unreadable: unknown[] }
    expect(report.totals.requests).toBe(1)
    expect(report.unreadable).toEqual([])
  })

  it('warmfold report reads the session and says in a note that it skipped the mark', async () => {
    const ctx = new Context()
    await ctx.start()
    try {
      ctx.plugin(SessionStore, { store: 'file', directory })
      const session = await ctx.sessions.create('plain')
      session.append('user/message', { message: createUserMessage('hello') }, 'append')
      await ctx.sessions.flush(session)
    } finally {
      await ctx.stop()
    }
    const log = await file(
      'marked.jsonl',
      Buffer.concat([Buffer.from(BOM), await readFile(join(directory, 'plain.jsonl'))]),
    )
    const result = await cli(['report', log, '--json'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout) as SessionReport
    expect(report.notes).toContain(
      `${log} starts with a UTF-8 byte order mark, which the report skipped; the session store writes none, and a ` +
        'host opening this file would refuse line 1 until the mark (its first 3 bytes) is removed.',
    )
  })
})
