import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sqliteSessionStore } from '@warmfold/session-store-sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionReport } from '../src/index.ts'
import { cli } from './run-cli.ts'
import { RecordingServer } from '@warmfold/test-utils'
import type { StoredConversation } from '@warmfold/proxy'
import { parseProxyArgs } from '../src/proxy/parse-proxy-args.ts'
import { SessionProxyStore } from '../src/proxy/session-proxy-store.ts'
import { runProxy } from '../src/proxy/proxy-command.ts'
import { chatText, prefixShare, recordedQwen, send, twoReplicas, withoutStore } from './support/proxy-replicas.ts'

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-proxy-store-'))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

/** The report rows that must match the JSONL log's: purpose, tokens, break cause. */
const rows = (report: SessionReport) =>
  report.requests.map((request) => [request.purpose, request.tokens, request.break?.cause ?? null])

describe('warmfold proxy --store sqlite: two replicas sharing one SQLite file', () => {
  it("a summary request reaching replica B is rewritten warm from the conversation request replica A forwarded; warmfold report --store reads each replica's session", async () => {
    const path = join(directory, 'replicas.db')
    const { requests, statuses, received, replicas } = await twoReplicas(() => sqliteSessionStore({ path }))
    expect(statuses).toEqual([200, 200, 200])
    // The conversation requests byte for byte; the summary request sent warm: A's last conversation request as its prefix.
    expect(received.slice(0, 2)).toEqual([requests[0]!.bytes, requests[1]!.bytes])
    expect(received[2]).not.toBe(requests[2]!.bytes)
    expect(prefixShare(requests[1]!.bytes, received[2]!)).toBeGreaterThanOrEqual(0.98)
    expect(prefixShare(requests[1]!.bytes, requests[2]!.bytes)).toBeLessThan(0.5)

    const [a, b] = await Promise.all(
      replicas.map(async (id) => {
        const result = await cli(['report', '--store', `sqlite:${path}`, id, '--json', '--price', 'openai'])
        expect(result.stderr).toBe('')
        expect(result.code).toBe(0)
        return JSON.parse(result.stdout) as SessionReport
      }),
    )
    expect(a!.source).toBe('proxy')
    expect(a!.totals.purposes).toEqual([['conversation', 2]])
    expect(b!.totals.purposes).toEqual([['compaction', 1]])
    expect(b!.requests[0]?.detail).toMatch(/rewrite \(qwen-code\) sent warm/)

    // The same requests through one proxy with a JSONL log report the same cache use, breaks and compactions.
    const log = join(directory, 'single.jsonl')
    const single = await withoutStore(log)
    expect(prefixShare(requests[1]!.bytes, single.received[2]!)).toBeGreaterThanOrEqual(0.98)
    const fromLog = await cli(['report', log, '--json', '--price', 'openai'])
    expect(fromLog.stderr).toBe('')
    expect(rows(JSON.parse(fromLog.stdout) as SessionReport)).toEqual([...rows(a!), ...rows(b!)])
  })

  it('a replica without the shared store forwards the same summary request as the agent wrote it', async () => {
    const { requests, statuses, received } = await withoutStore()
    expect(statuses).toEqual([200, 200, 200])
    expect(received[2]).toBe(requests[2]!.bytes)
  })

  it('--store is refused with --log, and a file: store is refused naming the flag', async () => {
    const both = await cli(['proxy', '--upstream', 'http://127.0.0.1:9', '--log', 'x.jsonl', '--store', 'sqlite:x.db'])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('--log and --store are exclusive')
    const file = await cli(['proxy', '--upstream', 'http://127.0.0.1:9', '--store', 'file:dir'])
    expect(file.code).toBe(2)
    expect(file.stderr).toContain('--store for warmfold proxy must be sqlite:PATH or postgres:URL')
    // A database under a file: the store cannot be made, so the proxy stops before it listens.
    const blocker = join(directory, 'a-file')
    await writeFile(blocker, '')
    const missing = await cli(['proxy', '--upstream', 'http://127.0.0.1:9', '--store', `sqlite:${blocker}/p.db`])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(`--store sqlite:${blocker}/p.db cannot be opened: `)
  })

  it('warmfold proxy --store sqlite:PATH prints its session, writes there, and the command it prints reports it', async () => {
    const path = join(directory, 'command.db')
    const upstream = await RecordingServer.start(() => chatText())
    let out = ''
    const stopper = { stop: () => {} }
    const stopped = new Promise<void>((resolve) => (stopper.stop = resolve))
    const io = { stdout: (text: string) => void (out += text), stderr: (text: string) => void (out += text) }
    const args = parseProxyArgs(['--upstream', upstream.origin, '--port', '0', '--store', `sqlite:${path}`], {})
    const running = runProxy(args, io, (done) => void stopped.then(done))
    try {
      await expect.poll(() => out).toContain('listening on http://127.0.0.1:')
      expect(out).toMatch(new RegExp(`store: sqlite:${path} session proxy-\\d{8}T\\d{6}-`))
      const proxy = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!
      expect(await send(proxy, recordedQwen()[0]!)).toBe(200)
      stopper.stop()
      expect(await running).toBe(0)
    } finally {
      await upstream.close()
    }
    const command = /report: warmfold (report --store \S+ \S+)/.exec(out)![1]!.split(' ')
    const result = await cli([...command, '--json'])
    expect(result.stderr).toBe('')
    expect((JSON.parse(result.stdout) as SessionReport).totals.purposes).toEqual([['conversation', 1]])
  })

  it("recall reads only the other replicas' requests of its API within the TTL, each once; a replaced one is read anew", async () => {
    const path = join(directory, 'recall.db')
    const a = await SessionProxyStore.open(sqliteSessionStore({ path }))
    const backend = sqliteSessionStore({ path })
    let reads = 0
    const read = backend.read.bind(backend)
    backend.read = (id) => (reads++, read(id))
    const b = await SessionProxyStore.open(backend)
    const conversation = (sessionKey: string, api: StoredConversation['api'], at: number, id = 1) => ({
      replica: a.replica,
      sessionKey,
      api,
      id,
      at,
      method: 'POST',
      url: '/v1/chat/completions',
      body: `{"n":${id}}`,
    })
    a.remember(conversation('s1', 'openai-chat', 5000))
    a.remember(conversation('s2', 'openai-chat', 5000))
    a.remember(conversation('s3', 'openai-responses', 5000))
    a.remember(conversation('s4', 'openai-chat', 1000))
    b.remember(conversation('s5', 'openai-chat', 5000))
    await Promise.all([a.settled(), b.settled()])
    const keys = async () =>
      (await b.recall('openai-chat', 2000)).map((stored) => [stored.sessionKey, stored.id]).toSorted()
    expect(await keys()).toEqual([
      ['s1', 1],
      ['s2', 1],
    ])
    expect(reads).toBe(2)
    expect(await keys()).toHaveLength(2)
    expect(reads).toBe(2)
    a.remember(conversation('s1', 'openai-chat', 6000, 2))
    await a.settled()
    expect(await keys()).toEqual([
      ['s1', 2],
      ['s2', 1],
    ])
    expect(reads).toBe(3)
    await a.close()
    await b.close()
  })
  it('a request listed before its replica flushed it is read again by the next recall, not forgotten', async () => {
    const path = join(directory, 'unflushed.db')
    const backendA = sqliteSessionStore({ path })
    const flush = backendA.flush.bind(backendA)
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let created!: () => void
    const madeVisible = new Promise<void>((resolve) => (created = resolve))
    const a = await SessionProxyStore.open(backendA)
    backendA.flush = async (session) => {
      if (session.id.startsWith('proxy-last.')) {
        created()
        await held
      }
      return flush(session)
    }
    const b = await SessionProxyStore.open(sqliteSessionStore({ path }))
    a.remember({
      replica: a.replica,
      sessionKey: 's1',
      api: 'openai-chat',
      id: 1,
      at: 5000,
      method: 'POST',
      url: '/v1/chat/completions',
      body: '{"n":1}',
    })
    await madeVisible
    expect(await b.recall('openai-chat', 0)).toEqual([])
    release()
    await a.settled()
    expect((await b.recall('openai-chat', 0)).map((stored) => stored.body)).toEqual(['{"n":1}'])
    await a.close()
    await b.close()
  })
})
