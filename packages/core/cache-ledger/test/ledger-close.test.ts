import type { GenerateOptions } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { LedgerHarness } from './ledger-fixture.ts'
import { conversationRequest, finish, mountLedger, observations, send, startSession, step } from './ledger-fixture.ts'

const harnesses: LedgerHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
})

/** A harness whose calls with purpose `compaction` never answer on their own (only an abort ends them). */
async function mountWithStalledSummaries(): Promise<LedgerHarness & { held: Promise<void> }> {
  const harness = await mountLedger()
  harnesses.push(harness)
  let hold!: () => void
  const held = new Promise<void>((resolve) => (hold = resolve))
  harness.reply = (request) => {
    if (request.purpose !== 'compaction') return undefined
    hold()
    return new Promise<never>(() => {}) as unknown as ScriptedReply
  }
  return Object.assign(harness, { held })
}

/** Sends a summary call of `session` with `signal`; resolves once the adapter holds it, with its settling. */
async function stalledSummary(
  harness: LedgerHarness & { held: Promise<void> },
  session: Session,
  signal: AbortSignal,
): Promise<{ settled: Promise<unknown> }> {
  const request: GenerateOptions = { ...conversationRequest(session), purpose: 'compaction', signal }
  const settled = send(harness, request).catch((error: unknown) => error)
  await harness.held
  return { settled }
}

describe('the cache ledger when a session closes', () => {
  it('logs a call in flight whose signal the close aborted (a discarded background fold): aborted, no warning', async () => {
    const harness = await mountWithStalledSummaries()
    const session = await startSession(harness)
    await step(harness, session)
    const controller = new AbortController()
    // As the compaction engine does: its close listener, prepended, aborts the fold's call.
    harness.ctx.on('session/close', () => controller.abort(new Error('closed')), { prepend: true })
    const { settled } = await stalledSummary(harness, session, controller.signal)
    await harness.ctx.sessions.close(session)
    expect(observations(session).map((observation) => [observation.purpose, observation.finish])).toEqual([
      ['conversation', 'stop'],
      ['compaction', 'aborted'],
    ])
    await settled
    // Its stream ending later logs nothing more.
    expect(observations(session)).toHaveLength(2)
    expect(harness.warnings).toEqual([])
  })

  it('names a call that was still running when its session closed, once it ends; logs nothing for it', async () => {
    const harness = await mountWithStalledSummaries()
    const session = await startSession(harness)
    const controller = new AbortController()
    const { settled } = await stalledSummary(harness, session, controller.signal)
    await harness.ctx.sessions.close(session)
    controller.abort(new Error('given up'))
    await settled
    expect(observations(session)).toEqual([])
    expect(harness.warnings).toEqual([
      'CacheLedger: session session was closed while a compaction request to p/m was in flight, so that ' +
        "request's cache/observation is not logged",
    ])
    harness.warnings.length = 0
  })
})
