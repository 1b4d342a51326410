import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson, createUserMessage } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { Fingerprinter } from '../src/prefix/index.ts'
import type { LedgerHarness } from './ledger-fixture.ts'
import {
  BASE,
  conversationRequest,
  finish,
  MODEL,
  mountLedger,
  observations,
  send,
  startSession,
  step,
} from './ledger-fixture.ts'

const TTL = 300_000
/** The header the agent loop would log for `BASE`. */
const HEADER = {
  config: { provider: BASE.provider, model: BASE.model, reasoningEffort: BASE.reasoningEffort },
  system: BASE.system,
  tools: BASE.tools,
}
const folders: string[] = []
const harnesses: LedgerHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

async function mount(directory: string): Promise<LedgerHarness> {
  const harness = await mountLedger({ directory, models: { m: { ...MODEL, cacheTtlMs: TTL } } })
  harnesses.push(harness)
  return harness
}

/**
 * A first process: logs the header as the agent loop does, sends three steps (the provider
 * reads the growing prefix), flushes and closes. Returns the folder and the last request's time.
 */
async function firstProcess(): Promise<{ directory: string; sentAt: number; chars: number }> {
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-ledger-restart-'))
  folders.push(directory)
  const first = await mount(directory)
  const session = await startSession(first)
  session.append('request/header', { header: HEADER, reason: 'initial' })
  for (let index = 0; index < 3; index++) {
    first.clock.now += 15_000
    await step(first, session)
  }
  const last = observations(session).at(-1)!
  await first.ctx.sessions.close(session)
  return { directory, sentAt: first.clock.now, chars: last.chars }
}

/** The second process: a new context, ledger and store on the same folder; the clock starts where `at` says. */
async function secondProcess(directory: string, at: number): Promise<{ harness: LedgerHarness; session: Session }> {
  const harness = await mount(directory)
  harness.clock.now = at
  const session = await harness.ctx.sessions.open('session')
  return { harness, session }
}

describe('the cache ledger after a restart', () => {
  it('a full miss within the TTL is a named break (provider), not "no break, nothing expected"', async () => {
    const { directory, sentAt, chars } = await firstProcess()
    const { harness, session } = await secondProcess(directory, sentAt + 60_000)
    // The provider lost the prefix: the whole prompt is written again.
    harness.usage = () => ({ inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 8309, outputTokens: 20 })
    await send(harness, conversationRequest(session))
    const restarted = observations(session).at(-1)!
    expect(restarted.expected).toBe(chars)
    expect(restarted.divergence.part).toBe('none')
    expect(restarted.cause).toBe('provider')
    expect(restarted.idleMs).toBe(60_000)
  })

  it('past the TTL, the same request is an expired break, with the idle time that expired it', async () => {
    const { directory, sentAt } = await firstProcess()
    const { harness, session } = await secondProcess(directory, sentAt + TTL + 1)
    harness.usage = () => ({ inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 8309, outputTokens: 20 })
    await send(harness, conversationRequest(session))
    expect(observations(session).at(-1)).toMatchObject({ cause: 'expired', expected: 0, idleMs: TTL + 1 })
  })

  it('within the TTL a provider that reads the prefix is no break, the restart notwithstanding', async () => {
    const { directory, sentAt, chars } = await firstProcess()
    const { harness, session } = await secondProcess(directory, sentAt + 30_000)
    harness.usage = () => ({
      inputTokens: 300,
      cacheReadTokens: Math.ceil(chars / 4),
      cacheWriteTokens: 0,
      outputTokens: 20,
    })
    await send(harness, conversationRequest(session))
    expect(observations(session).at(-1)).toMatchObject({ cause: 'none', expected: chars, divergence: { part: 'none' } })
  })

  it('a log whose requests cannot be rebuilt (no header logged) teaches nothing: the first request compares with nothing, as before', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-ledger-restart-'))
    folders.push(directory)
    const first = await mount(directory)
    const session = await startSession(first)
    await step(first, session)
    await first.ctx.sessions.close(session)
    const { harness, session: reopened } = await secondProcess(directory, first.clock.now + 1000)
    await send(harness, conversationRequest(reopened))
    expect(observations(reopened).at(-1)).toMatchObject({ divergence: { part: 'first' }, cause: 'none', expected: 0 })
  })

  it('a logged request the log cannot rebuild at its length (a message the host sent but never logged) teaches nothing', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-ledger-restart-'))
    folders.push(directory)
    const first = await mount(directory)
    const session = await startSession(first)
    session.append('request/header', { header: HEADER, reason: 'initial' })
    await step(first, session)
    // The last request carries a reminder the host added on the way out: the log has no event for it.
    const reminder = createUserMessage('Reminder: keep the public API.')
    await send(first, { ...conversationRequest(session), messages: [...session.deriveMessages(), reminder] })
    const logged = observations(session).at(-1)!
    await first.ctx.sessions.close(session)

    const { harness, session: reopened } = await secondProcess(directory, first.clock.now + 1000)
    const request = conversationRequest(reopened)
    expect(new Fingerprinter(canonicalJson).fingerprint(request).chars).toBeLessThan(logged.chars)
    await send(harness, request)
    // Compared with nothing (the rebuilt request is not the one sent), not with a wrong reference.
    expect(observations(reopened).at(-1)).toMatchObject({ divergence: { part: 'first' }, cause: 'none', expected: 0 })
  })
})
