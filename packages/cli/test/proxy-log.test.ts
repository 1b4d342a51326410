import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Exchange } from '@warmfold/proxy'
import { ProxyObserver } from '@warmfold/proxy'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DoctorReport, RequestApi, SessionReport } from '../src/index.ts'
import { REQUEST_APIS } from '../src/index.ts'
import { cli } from './run-cli.ts'
import { recordScenario, SCENARIO } from './support/record-doctor-scenario.ts'
import type { RecordedRequest } from './support/recording-server.ts'
import { RecordingServer } from './support/recording-server.ts'

let directory: string
let logs = 0
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-proxy-log-'))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

/** The summary calls of the doctor's scenario (lines 4–7): what the proxy's warm room would recognise. */
const SUMMARIES = [SCENARIO.warmReplay, SCENARIO.droppedTools, SCENARIO.replacedSystem, SCENARIO.changedEffort]

/** The scenario recorded from `api`'s SDK: the plain request log, and the same requests as proxy exchanges. */
async function record(api: RequestApi): Promise<{ plain: string; requests: RecordedRequest[] }> {
  const server = await new RecordingServer().start()
  try {
    await recordScenario(api, server.url)
  } finally {
    await server.close()
  }
  const plain = join(directory, `${api}-plain.jsonl`)
  await writeFile(plain, server.log())
  return { plain, requests: server.requests }
}

function exchange(api: RequestApi, request: RecordedRequest, index: number): Exchange {
  const body = Buffer.from(JSON.stringify(request.body))
  return {
    request: {
      id: index + 1,
      receivedAt: 1_000_000 + request.t * 1000,
      method: 'POST',
      url: request.url,
      route: { api, kind: 'generate', streamByPath: false },
      rawHeaders: [],
      headers: { ...request.headers, authorization: 'Bearer sk-never-logged' },
      body,
      stream: false,
    },
    sent: body,
    answer: {
      status: 200,
      streamed: false,
      content: 'text',
      totalMs: 4,
      usage: { inputTokens: 3000, cacheReadTokens: index ? 2000 : 0, cacheWriteTokens: 0, outputTokens: 20 },
      ...(index + 1 === SCENARIO.warmReplay ? { holdReleased: 'it showed no text within 60000 ms' } : {}),
    },
    ...(SUMMARIES.includes((index + 1) as never)
      ? { plan: { action: 'forward' as const, summary: { agent: 'structure', confidence: 0.9, reason: 'test' } } }
      : {}),
  }
}

/** The proxy log of `api`'s scenario. */
async function proxyLog(api: RequestApi, requests: readonly RecordedRequest[], noBodies = false): Promise<string> {
  const log = join(directory, `${api}-proxy-${++logs}.jsonl`)
  const observer = new ProxyObserver({ log, noBodies })
  requests.forEach((request, index) => observer.observe(exchange(api, request, index)))
  await observer.close()
  return log
}

const withoutIdle = (report: DoctorReport) => report.requests.map(({ idleMs: _idle, ...rest }) => rest)

describe.each(REQUEST_APIS)('a warmfold proxy log of %s requests', (api) => {
  let recorded: { plain: string; requests: RecordedRequest[] }
  beforeAll(async () => {
    recorded = await record(api)
  })

  it('reads in warmfold doctor exactly as the plain request log does', async () => {
    const log = await proxyLog(api, recorded.requests)
    const plain = await cli(['doctor', recorded.plain, '--json'])
    const proxied = await cli(['doctor', log, '--json'])
    expect(proxied.stderr).toBe('')
    expect(proxied.code).toBe(0)
    const report = JSON.parse(proxied.stdout) as DoctorReport
    expect(report.unreadable).toEqual([])
    expect(withoutIdle(report)).toEqual(withoutIdle(JSON.parse(plain.stdout) as DoctorReport))
  })

  it('without bodies: warmfold doctor reports each line cleanly as holding no body', async () => {
    const log = await proxyLog(api, recorded.requests, true)
    const result = await cli(['doctor', log])
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(
      lines.slice(0, 9).every((line) => /logged without its body \(--no-bodies: sha256 [0-9a-f]{64}\)/.test(line)),
    ).toBe(true)
    expect(lines.at(-1)).toContain('holds no readable request (9 unreadable lines, listed above)')
  })
})

describe('warmfold report on a warmfold proxy log', () => {
  let log: string
  beforeAll(async () => {
    const { requests } = await record('openai-chat')
    log = await proxyLog('openai-chat', requests)
  })

  it("shows each request's cached and prefilled tokens, the breaks with their cause, and the compactions", async () => {
    const result = await cli(['report', log, '--json', '--price', 'openai'])
    expect(result.stderr).toBe('')
    const report = JSON.parse(result.stdout) as SessionReport
    expect(report.source).toBe('proxy')
    expect(report.sessionId).toBe('1 session(s) of a warmfold proxy log')
    expect(report.totals.purposes).toEqual([
      ['conversation', 5],
      ['compaction', 4],
    ])
    expect(report.requests[1]?.tokens).toEqual({ prompt: 3000, cached: 2000, written: 0, uncached: 1000, output: 20 })
    expect(
      report.requests.filter((request) => request.break).map((request) => [request.line, request.break?.cause]),
    ).toEqual([[SCENARIO.rewroteToolResult, 'prune']])
    expect(report.requests[SCENARIO.droppedTools - 1]?.detail).toMatch(/tools differ from tool 0/)
    expect(report.requests[SCENARIO.warmReplay - 1]?.detail).toMatch(
      /; its answer went on unheld: it showed no text within 60000 ms$/,
    )
    expect(report.requests.filter((request) => request.detail.includes('unheld'))).toHaveLength(1)
    const text = await cli(['report', log, '--price', 'openai'])
    expect(text.stdout).toContain('numbers from a warmfold proxy log')
    expect(text.stdout).toMatch(/#8 {2}line 8 {2}conversation {2}prune/)
  })
})
