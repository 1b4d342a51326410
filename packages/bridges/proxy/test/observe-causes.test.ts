import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REQUEST_APIS } from '@warmfold/cache-ledger/prefix'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ExchangeRecord } from '../src/index.ts'
import { PROVIDER_SIDE, ProxyObserver } from '../src/index.ts'
import type { CapturedRequest } from './support/observe-capture.ts'
import { exchangeOf, usage } from './support/observe-capture.ts'
import { readProxyLog } from './support/observe-log-lines.ts'
import type { SendOptions } from './support/observe-sdk.ts'
import { capture, H1, H2, H3, KETTLE, result, TESTS, user } from './support/observe-sdk.ts'

let directory: string
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'warmfold-observe-causes-'))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

const TTL = 300_000
const session: SendOptions = { headers: { 'x-session-id': 'session-1' } }
const PRUNED = [
  ...H3.slice(0, 2),
  result('call_1', 'read_file', `${KETTLE.slice(0, 100)}\n[… pruned …]`),
  ...H3.slice(3),
]
const H4 = [...PRUNED, user('Now check the clock module too.')]
const SUMMARY = 'Summary: the timer rounded up with Math.ceil; fixed in src/kettle.ts, tests pass.'
const AFTER_FOLD = [user(SUMMARY), user('Go on with the clock module.')]

/** The session, request by request, with what each one is. */
const STEPS: ReadonlyArray<readonly [string, (typeof H1)[number][], SendOptions]> = [
  ['first', H1, session],
  ['append', H2, session],
  ['provider', H3, session],
  ['prune', PRUNED, session],
  ['tools', H4, { ...session, tools: false }],
  ['system', H4, { ...session, tools: false, system: 'You summarise coding sessions.' }],
  ['envelope', H4, { ...session, tools: false, system: 'You summarise coding sessions.', effort: 'low' }],
  [
    'summary',
    [...H4, user('Write a hand-over note.')],
    { ...session, tools: false, system: 'You summarise coding sessions.', effort: 'low' },
  ],
  ['fold', AFTER_FOLD, { ...session, tools: false, system: 'You summarise coding sessions.', effort: 'low' }],
  [
    'expired',
    [...AFTER_FOLD, user('And the tests?')],
    { ...session, tools: false, system: 'You summarise coding sessions.', effort: 'low' },
  ],
]

describe.each(REQUEST_APIS)('the observer on requests the %s SDK sent', (api) => {
  let captured: CapturedRequest[]
  let records: ExchangeRecord[]
  beforeAll(async () => {
    captured = await capture(
      api,
      STEPS.map(([, history, options]) => [history, options] as const),
    )
    const log = join(directory, `${api}.jsonl`)
    const observer = new ProxyObserver({ log, cacheTtlMs: TTL, providerToleranceTokens: 0 })
    let at = 1_000_000
    STEPS.forEach(([name], index) => {
      at += name === 'expired' ? TTL + 1000 : 1000
      const reported =
        name === 'provider' ? usage(2000, 0) : usage(1000 + index * 100, name === 'summary' ? 1690 : 900 + index * 90)
      observer.observe(
        exchangeOf(captured[index] as CapturedRequest, {
          id: index + 1,
          at,
          usage: name === 'first' ? undefined : reported,
          ...(name === 'summary'
            ? { plan: { action: 'forward', summary: { agent: 'structure', confidence: 0.9, reason: 'test' } } }
            : {}),
          ...(name === 'provider' ? { providerDiagnosis: 'messages_changed' } : {}),
        }) as never,
      )
    })
    await observer.close()
    records = (await readProxyLog(log)).map((line) => line.warmfold)
  })
  const record = (name: string) => records[STEPS.findIndex(([step]) => step === name)] as ExchangeRecord

  it('logs one line per exchange, in order, all in one session (its header)', () => {
    expect(records.map((item) => item.id)).toEqual(STEPS.map((_, index) => index + 1))
    expect(new Set(records.map((item) => item.session))).toEqual(new Set([`${api} x-session-id=session-1`]))
    expect(records.every((item) => item.sessionBy === 'header x-session-id')).toBe(true)
  })

  it('names the cause of each request as it was made', () => {
    expect(records.map((item) => item.cause)).toEqual([
      'first',
      'none',
      'provider',
      'prune',
      'tools',
      'system',
      'envelope',
      'none',
      'fold',
      'expired',
    ])
    expect(record('summary').kind).toBe('compaction')
    expect(record('fold').explanation).toContain('after a summary request')
    expect(record('prune').explanation).toContain('a tool result was rewritten')
  })

  it('predicts the cached tokens from the first divergent byte, at the reported tokens per character', () => {
    const append = record('append')
    const first = record('first')
    expect(first.tokenScale).toBe('chars/4')
    expect(first.predictedCachedTokens).toBe(0)
    expect(append.tokenScale).toBe('reported')
    // An append keeps the whole earlier prompt.
    expect(append.predictedCachedChars).toBe(first.promptChars)
    expect(append.predictedCachedTokens).toBe(
      Math.round(
        ((first.promptChars as number) * (append.usage?.inputTokens as number)) / (append.promptChars as number),
      ),
    )
    expect(record('prune').predictedCachedChars).toBeLessThan(record('provider').promptChars as number)
    expect(record('expired').predictedCachedTokens).toBe(0)
  })

  it('blames the provider only where the prefix was byte-identical, beside its own diagnosis', () => {
    const provider = record('provider')
    expect(provider.explanation).toContain(PROVIDER_SIDE)
    expect(provider.providerDiagnosis).toBe('messages_changed')
    expect(provider.predictedCachedTokens).toBeGreaterThan(0)
    expect(provider.lostTokens).toBe(provider.predictedCachedTokens)
  })

  it('says where each break diverged (the phrase book)', () => {
    expect(record('tools').phrase).toMatch(/^tools differ from tool 0/)
    expect(record('system').phrase).toMatch(/^system prompt differs/)
    expect(record('envelope').phrase).toMatch(/^another cache family: /)
    // Chat Completions counts its system message.
    expect(record('prune').phrase).toMatch(api === 'openai-chat' ? /^message 3 \(tool\)/ : /^message 2 \(/)
    expect(record('fold').phrase).toMatch(api === 'openai-chat' ? /^message 1 \(user\)/ : /^message 0 \(user\)/)
  })
})

it('keeps TESTS in use', () => expect(TESTS.length).toBeGreaterThan(0))
