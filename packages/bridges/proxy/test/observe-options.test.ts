import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { DEFAULT_MAX_SESSIONS, DEFAULT_OBSERVER_CACHE_TTL_MS, ProxyObserver } from '../src/index.ts'
import type { CapturedRequest } from './support/observe-capture.ts'
import { exchangeOf } from './support/observe-capture.ts'
import { readProxyLog } from './support/observe-log-lines.ts'

/** One turn of the event loop. */
const turn = () => new Promise((resolve) => setImmediate(resolve))

it('applies the defaults and refuses an option out of range, naming it and the value', () => {
  const { options } = new ProxyObserver()
  expect(options).toMatchObject({
    cacheTtlMs: DEFAULT_OBSERVER_CACHE_TTL_MS,
    maxSessions: DEFAULT_MAX_SESSIONS,
    noBodies: false,
    forgetAfterTtls: 4,
    providerToleranceTokens: 1024,
  })
  expect(DEFAULT_OBSERVER_CACHE_TTL_MS).toBe(300_000)
  expect(() => new ProxyObserver({ maxSessions: 0 })).toThrow(
    'observer option maxSessions must be a positive integer, got 0',
  )
  expect(() => new ProxyObserver({ cacheTtlMs: Number.NaN })).toThrow(
    'observer option cacheTtlMs must be a positive number, got NaN',
  )
  expect(() => new ProxyObserver({ log: '' })).toThrow('observer option log must be a file path, got ""')
  expect(
    () =>
      new ProxyObserver({ prices: { name: 'x', cacheRead: -1, cacheWrite: 1, output: 1, usdPerMillionInput: null } }),
  ).toThrow('observer option prices.cacheRead must be a number ≥ 0, got -1')
})

it('logs a request that is not a generate request without its body, and refuses (without throwing) an exchange after close', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-observe-options-'))
  try {
    const log = join(directory, 'other.jsonl')
    const observer = new ProxyObserver({ log })
    const countTokens: CapturedRequest = {
      method: 'POST',
      url: '/v1/messages/count_tokens',
      rawHeaders: [],
      headers: { 'anthropic-version': '2023-06-01' },
      body: Buffer.from('{"model":"claude","messages":[{"role":"user","content":"secret plan"}]}'),
    }
    const exchange = exchangeOf({ ...countTokens, url: '/v1/messages' }, { id: 1, at: 1 })
    observer.observe({
      ...exchange,
      request: {
        ...exchange.request,
        url: countTokens.url,
        route: { api: 'anthropic-messages', kind: 'count-tokens', streamByPath: false },
      },
    })
    await observer.close()
    expect(() => observer.observe(exchange)).not.toThrow()
    expect(observer.errors.at(-1)?.message).toBe('exchange 1 observed after close(): not analysed or logged')
    const lines = await readProxyLog(log)
    expect(lines).toHaveLength(1)
    expect(lines[0]?.warmfold).toMatchObject({
      kind: 'other',
      path: '/v1/messages/count_tokens',
      api: 'anthropic-messages',
    })
    expect(lines[0] && 'body' in lines[0]).toBe(false)
  } finally {
    await rm(directory, { recursive: true, force: true })
  }
})

it('never throws into the caller: an exchange it cannot analyse is logged as unreadable, saying why', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-observe-broken-'))
  try {
    const log = join(directory, 'broken.jsonl')
    const observer = new ProxyObserver({ log })
    const exchange = exchangeOf(
      { method: 'POST', url: '/v1/chat/completions', rawHeaders: [], headers: {}, body: Buffer.from('{}') },
      { id: 9, at: 1 },
    )
    expect(() => observer.observe({ ...exchange, sent: undefined as unknown as Buffer })).not.toThrow()
    await observer.close()
    const [line] = await readProxyLog(log)
    expect(line?.warmfold.kind).toBe('unreadable')
    expect(line?.warmfold.unreadable).toMatch(/^the observer could not analyse it: /)
    expect(observer.errors).toHaveLength(1)
  } finally {
    await rm(directory, { recursive: true, force: true })
  }
})

it('returns from observe() before any analysis, then analyses one exchange per turn of the event loop, in order', async () => {
  const observer = new ProxyObserver()
  const body = Buffer.from(JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: 'hi' }] }))
  for (let id = 1; id <= 3; id++)
    observer.observe(
      exchangeOf({ method: 'POST', url: '/v1/chat/completions', rawHeaders: [], headers: {}, body }, { id, at: id }),
    )
  expect(observer.memory().queued).toBe(3)
  expect(observer.snapshot().totals.requests).toBe(0)
  await turn()
  expect(observer.snapshot().totals.requests).toBe(1)
  await turn()
  expect(observer.snapshot().totals.requests).toBe(2)
  await observer.close()
  expect(observer.memory().queued).toBe(0)
  expect(observer.snapshot().totals.requests).toBe(3)
})
