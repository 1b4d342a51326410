import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REQUEST_APIS } from '@warmfold/cache-ledger/prefix'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProxyObserver, REDACTED } from '../src/index.ts'
import { unreadableRecord } from '../src/observe/exchange-record.ts'
import { logLineOf } from '../src/observe/observer-log.ts'
import type { CapturedRequest } from './support/observe-capture.ts'
import { exchangeOf, usage } from './support/observe-capture.ts'
import { readProxyLog } from './support/observe-log-lines.ts'
import { capture, H2, H3, user } from './support/observe-sdk.ts'

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-observe-log-'))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

const KEY = 'sk-planted-4f1c9e2b7a6d5e3f'
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

describe('the proxy log', () => {
  it('is created 0600, holds one line per exchange in order, appends, and loses none on close', async () => {
    const log = join(directory, 'order.jsonl')
    const requests = await capture('openai-chat', [[H2, {}]])
    for (const [run, count] of [
      [0, 150],
      [1, 50],
    ] as const) {
      const observer = new ProxyObserver({ log })
      for (let index = 0; index < count; index++)
        observer.observe(
          exchangeOf(requests[0] as CapturedRequest, { id: run * 1000 + index + 1, at: 1_000_000 + index }),
        )
      // Closed at once: every queued exchange is still analysed and written.
      await observer.close()
    }
    expect((await stat(log)).mode & 0o777).toBe(0o600)
    const ids = (await readProxyLog(log)).map((line) => line.warmfold.id)
    expect(ids).toEqual([
      ...Array.from({ length: 150 }, (_, index) => index + 1),
      ...Array.from({ length: 50 }, (_, index) => 1001 + index),
    ])
  })

  it.each(REQUEST_APIS)('never holds the API key a %s client sent (headers or ?key=)', async (api) => {
    const log = join(directory, `key-${api}.jsonl`)
    const requests = await capture(api, [
      [H2, { apiKey: KEY, headers: { 'x-session-id': 's' } }],
      [H3, { apiKey: KEY, headers: { 'x-session-id': 's', cookie: `session=${KEY}` } }],
    ])
    const observer = new ProxyObserver({ log })
    requests.forEach((request, index) => {
      const planted = { ...request, url: `${request.url}${request.url.includes('?') ? '&' : '?'}key=${KEY}` }
      observer.observe(
        exchangeOf(index ? planted : request, { id: index + 1, at: 1_000_000 + index, usage: usage(900, 400) }),
      )
    })
    await observer.close()
    const text = await readFile(log, 'utf8')
    expect(text).not.toContain(KEY)
    expect(text).not.toContain('4f1c9e2b7a6d5e3f')
    const lines = await readProxyLog(log)
    expect(lines).toHaveLength(2)
    expect(lines[1]?.url).toContain(`key=${encodeURIComponent(REDACTED)}`)
    const credential = api === 'gemini' ? 'x-goog-api-key' : 'authorization'
    expect(lines[0]?.headers[credential], JSON.stringify(lines[0]?.headers)).toBe(REDACTED)
  })

  it('with noBodies holds a digest and the byte count instead of each body', async () => {
    const log = join(directory, 'no-bodies.jsonl')
    const requests = await capture('anthropic-messages', [[H2, {}]])
    const observer = new ProxyObserver({ log, noBodies: true })
    observer.observe(exchangeOf(requests[0] as CapturedRequest, { id: 1, at: 1 }))
    await observer.close()
    const [line] = await readProxyLog(log)
    expect(line && 'body' in line).toBe(false)
    expect(line?.warmfold).toMatchObject({
      bodyLogged: false,
      bodySha256: sha256((requests[0] as CapturedRequest).body),
      bodyBytes: (requests[0] as CapturedRequest).body.length,
      cause: 'first',
    })
    const text = await readFile(log, 'utf8')
    expect(text).not.toContain('kettle')
  })

  it('never holds a body the record says is not logged, even when the analysis failed after reading it', async () => {
    // The observer turns an exchange whose analysis threw midway into an unreadable record with
    // bodyLogged false, while the body it had parsed is still at hand.
    const [request] = await capture('anthropic-messages', [[H2, {}]])
    const exchange = exchangeOf(request as CapturedRequest, { id: 1, at: 1 })
    const json = JSON.parse((request as CapturedRequest).body.toString('utf8')) as object
    const line = logLineOf(exchange, unreadableRecord(exchange, new Error('index out of step')), json)
    expect('body' in line).toBe(false)
    expect(JSON.stringify(line)).not.toContain('kettle')
  })

  it('logs a body that is not JSON, or not its API shape, as unreadable with the reason', async () => {
    const log = join(directory, 'unreadable.jsonl')
    const [request] = await capture('openai-chat', [[H2, {}]])
    const observer = new ProxyObserver({ log })
    const broken = (id: number, body: string) =>
      exchangeOf({ ...(request as CapturedRequest), body: Buffer.from(body) }, { id, at: id })
    observer.observe(broken(1, '{"model": "gpt", "messages": [ '))
    observer.observe(broken(2, '{"model": "gpt", "messages": {"role": "user"}}'))
    observer.observe(broken(3, '[1, 2]'))
    await observer.close()
    const records = (await readProxyLog(log)).map((line) => line.warmfold)
    expect(records.map((record) => record.kind)).toEqual(['unreadable', 'unreadable', 'unreadable'])
    expect(records[0]?.unreadable).toMatch(/^the body is not JSON \(/)
    expect(records[1]?.unreadable).toMatch(
      /^not a valid openai-chat body \(detected by url\): messages must be an array/,
    )
    expect(records[2]?.unreadable).toBe('the body is not a JSON object but an array')
    expect(observer.snapshot().unreadable).toHaveLength(3)
  })

  it('records a rewrite (both hashes, the request it replays, the diff, what it saved, a released hold) and a fail-open', async () => {
    const log = join(directory, 'rewrite.jsonl')
    const summary = [...H3, user('Write a hand-over note.')]
    const [h3, original, rewritten] = await capture('openai-responses', [
      [H3, { sessionInBody: 'conv' }],
      [summary, { sessionInBody: 'conv', tools: false }],
      [summary, { sessionInBody: 'conv' }],
    ])
    const observer = new ProxyObserver({
      log,
      now: () => 3000,
      prices: { name: 'openai', cacheRead: 0.1, cacheWrite: 1.25, output: 6, usdPerMillionInput: 2.5 },
    })
    observer.observe(exchangeOf(h3 as CapturedRequest, { id: 1, at: 1000, usage: usage(1200, 0) }))
    const remembered = observer.lastConversationFor(
      'openai-responses',
      JSON.parse((original as CapturedRequest).body.toString('utf8')) as Record<string, unknown>,
    )
    expect(remembered?.request.id).toBe(1)
    const plan = {
      action: 'rewrite' as const,
      body: (rewritten as CapturedRequest).body,
      recognition: { agent: 'codex', confidence: 0.95, reason: 'tools dropped, instruction appended' },
      replays: remembered!,
      diff: ['tools: restored 2 tools'],
    }
    observer.observe(
      exchangeOf(original as CapturedRequest, {
        id: 2,
        at: 2000,
        usage: usage(1250, 1150),
        plan,
        sent: plan.body,
        holdReleased: 'it showed no text within 60000 ms',
      }),
    )
    observer.observe(
      exchangeOf(original as CapturedRequest, {
        id: 3,
        at: 3000,
        usage: usage(1220, 0),
        plan,
        failOpen: {
          reason: 'the rewritten request was answered with a tool call',
          rewrittenAnswer: { status: 200, streamed: false, content: 'tool-call', totalMs: 4, usage: usage(1250, 1150) },
        },
      }),
    )
    await observer.close()
    const [, warm, failed] = (await readProxyLog(log)).map((line) => line.warmfold)
    expect(warm?.kind).toBe('compaction')
    expect(warm?.holdReleased).toBe('it showed no text within 60000 ms')
    expect(failed?.holdReleased).toBeUndefined()
    expect(warm?.rewrite).toMatchObject({
      sent: 'rewritten',
      originalSha256: sha256((original as CapturedRequest).body),
      rewrittenSha256: sha256((rewritten as CapturedRequest).body),
      replays: 1,
      diff: ['tools: restored 2 tools'],
      reportedCachedTokens: 1150,
    })
    const { predictedUncachedTokens, savedTokens, predictedCachedTokens } = warm!.rewrite!
    // The original dropped the tools, so nothing of the conversation's prefix was reusable: all of
    // its (shorter) prompt is prefilled, at the scale of what was sent.
    expect(predictedUncachedTokens.original).toBeGreaterThan(1000)
    expect(predictedUncachedTokens.rewritten).toBeLessThan(100)
    expect(savedTokens).toBe(predictedUncachedTokens.original - predictedUncachedTokens.rewritten)
    expect(predictedCachedTokens).toBe(1250 - predictedUncachedTokens.rewritten)
    expect(warm?.cost?.usd).toBeCloseTo(((100 + 1150 * 0.1 + 10 * 6) * 2.5) / 1e6, 10)
    expect(failed?.failOpen).toMatchObject({
      reason: 'the rewritten request was answered with a tool call',
      rewrittenStatus: 200,
    })
    expect(failed?.rewrite?.sent).toBe('original')
    const compactions = observer.snapshot().compactions
    expect(compactions.map((item) => [item.id, item.failOpen !== null])).toEqual([
      [3, true],
      [2, false],
    ])
  })
})
