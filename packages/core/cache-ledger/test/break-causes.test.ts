import { canonicalJson, createAssistantMessage, createUserMessage, textBlock } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { charsBefore, Fingerprinter } from '../src/prefix/index.ts'
import type { LedgerHarness } from './ledger-fixture.ts'
import {
  BASE,
  conversationRequest,
  finish,
  logFold,
  logPrune,
  mountLedger,
  observations,
  send,
  startSession,
  step,
  TOOLS,
} from './ledger-fixture.ts'

const harnesses: LedgerHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
})

async function mount(options: Parameters<typeof mountLedger>[0] = {}): Promise<LedgerHarness> {
  const harness = await mountLedger(options)
  harnesses.push(harness)
  return harness
}

/** Characters of the prompt before message `index` of `request` (tools and system included). */
function charsBeforeMessage(request: Parameters<Fingerprinter['fingerprint']>[0], index: number): number {
  const print = new Fingerprinter(canonicalJson).fingerprint(request)
  return charsBefore(print, print.messages[index]!.start)
}

describe('cache/observation: one per request, with the first divergence and its cause', () => {
  it('first request: nothing to compare; later requests that only append: none, with the previous prompt expected from the cache', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    await step(harness, session)
    harness.clock.now += 20_000
    const second = conversationRequest(session)
    await step(harness, session)
    const [first, next] = observations(session)
    expect(first).toMatchObject({
      purpose: 'conversation',
      provider: 'p',
      model: 'm',
      divergence: { part: 'first' },
      cause: 'none',
      expected: 0,
      idleMs: null,
      finish: 'stop',
    })
    expect(next).toMatchObject({ divergence: { part: 'none' }, cause: 'none', idleMs: 20_000 })
    // Everything the first request sent is a prefix of the second.
    expect(next!.expected).toBe(first!.chars)
    expect(next!.chars).toBe(new Fingerprinter(canonicalJson).fingerprint(second).chars)
    expect(next!.chars).toBeGreaterThan(first!.chars)
  })

  it('fold: a checkpoint replaced the head, so the request differs at message 0 and everything before it is still expected', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    for (let index = 0; index < 3; index++) await step(harness, session)
    logFold(session, 0, 4)
    const request = conversationRequest(session)
    await step(harness, session)
    const observation = observations(session).at(-1)!
    const offset = charsBeforeMessage(request, 0)
    expect(observation).toMatchObject({
      cause: 'fold',
      divergence: { part: 'message', index: 0, role: 'user', charOffset: offset },
      expected: offset,
    })
  })

  it('prune: a tool result rewritten in place breaks the prefix at that message', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    for (let index = 0; index < 3; index++) await step(harness, session)
    logPrune(session, 4)
    const request = conversationRequest(session)
    await step(harness, session)
    const offset = charsBeforeMessage(request, 4)
    expect(observations(session).at(-1)).toMatchObject({
      cause: 'prune',
      divergence: { part: 'message', index: 4, role: 'user', charOffset: offset },
      expected: offset,
    })
  })

  it("fold and prune logged together: the divergence at message 0 is the fold's", async () => {
    const harness = await mount()
    const session = await startSession(harness)
    for (let index = 0; index < 4; index++) await step(harness, session)
    logPrune(session, 6)
    logFold(session, 0, 2)
    await step(harness, session)
    expect(observations(session).at(-1)).toMatchObject({ cause: 'fold', divergence: { part: 'message', index: 0 } })
  })

  it('envelope: another reasoning effort is another cache family, nothing expected', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    await step(harness, session)
    await step(harness, session, { reasoningEffort: 'max' })
    expect(observations(session).at(-1)).toMatchObject({
      cause: 'envelope',
      divergence: { part: 'envelope', field: 'reasoningEffort', charOffset: 0 },
      expected: 0,
      idleMs: null,
    })
  })

  it('envelope: a new system prompt breaks the prefix after the tools', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    await step(harness, session)
    const request = conversationRequest(session, { system: `${BASE.system} Answer briefly.` })
    await step(harness, session, { system: request.system })
    const offset = charsBefore(new Fingerprinter(canonicalJson).fingerprint(request), TOOLS.length)
    expect(observations(session).at(-1)).toMatchObject({
      cause: 'envelope',
      divergence: { part: 'system', charOffset: offset },
      expected: offset,
    })
  })

  it('tools: a tool added before the others breaks the prefix at tool 0', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    await step(harness, session)
    const tools = [{ name: 'search', description: 'Search the repository.', parameters: { type: 'object' } }, ...TOOLS]
    await step(harness, session, { tools })
    expect(observations(session).at(-1)).toMatchObject({
      cause: 'tools',
      divergence: { part: 'tools', index: 0, charOffset: 0 },
      expected: 0,
    })
  })

  it('tools: a tool removed at the end breaks the prefix after the tools kept', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    await step(harness, session)
    const request = conversationRequest(session, { tools: TOOLS.slice(0, 1) })
    await step(harness, session, { tools: TOOLS.slice(0, 1) })
    const offset = charsBefore(new Fingerprinter(canonicalJson).fingerprint(request), 1)
    expect(observations(session).at(-1)).toMatchObject({
      cause: 'tools',
      divergence: { part: 'tools', index: 1, charOffset: offset },
      expected: offset,
    })
  })

  it("expired: idle longer than the provider's TTL, nothing is expected even though the request only appends", async () => {
    const harness = await mount({ ledger: { cacheTtlMs: { p: 60_000 } } })
    const session = await startSession(harness)
    await step(harness, session)
    harness.clock.now += 59_000
    await step(harness, session)
    harness.clock.now += 61_000
    await step(harness, session)
    const [, warm, cold] = observations(session)
    expect(warm).toMatchObject({ cause: 'none', idleMs: 59_000 })
    expect(warm!.expected).toBeGreaterThan(0)
    expect(cold).toMatchObject({ cause: 'expired', divergence: { part: 'none' }, expected: 0, idleMs: 61_000 })
  })

  it("expired: the model's own cacheTtlMs wins over the ledger's per-provider default", async () => {
    const harness = await mount({
      models: { m: { contextWindow: 128000, cacheTtlMs: 10_000 } },
      ledger: { cacheTtlMs: { p: 3_600_000 } },
    })
    const session = await startSession(harness)
    await step(harness, session, { reasoningEffort: undefined })
    harness.clock.now += 11_000
    await step(harness, session, { reasoningEffort: undefined })
    expect(observations(session).at(-1)).toMatchObject({ cause: 'expired', expected: 0 })
  })

  it('provider: the prefix was identical but the provider reported a miss; a shortfall within tolerance is none', async () => {
    const harness = await mount({ ledger: { providerToleranceTokens: 50 } })
    const session = await startSession(harness)
    let cached = 0
    harness.usage = (request) => {
      const prompt = Math.round(new Fingerprinter(canonicalJson).fingerprint(request).chars / 4)
      return { inputTokens: prompt - cached, cacheReadTokens: cached, outputTokens: 5 }
    }
    await step(harness, session)
    cached = 0
    await step(harness, session)
    const miss = observations(session).at(-1)!
    expect(miss).toMatchObject({ cause: 'provider', divergence: { part: 'none' }, cached: 0, output: 5 })
    expect(miss.uncached).toBeGreaterThan(0)
    cached = Math.round(miss.chars / 4) - 20
    await step(harness, session)
    expect(observations(session).at(-1)).toMatchObject({ cause: 'none', cached })
  })

  it('unknown: history changed with no fold or prune logged', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    await step(harness, session)
    await step(harness, session)
    const messages = [...session.deriveMessages()]
    messages[1] = createAssistantMessage([textBlock('A reply rewritten by the host.')], { provider: 'p', model: 'm' })
    await send(harness, { ...conversationRequest(session), messages })
    expect(observations(session).at(-1)).toMatchObject({
      cause: 'unknown',
      divergence: { part: 'message', index: 1, role: 'assistant' },
    })
  })

  it('a failed call is observed too, without tokens, and the retry is compared with it', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    harness.reply = (_request, index) => (index === 0 ? { error: new Error('socket hang up') } : undefined)
    await expect(send(harness, conversationRequest(session))).rejects.toThrow('socket hang up')
    await send(harness, conversationRequest(session))
    const [failed, retry] = observations(session)
    expect(failed).toMatchObject({ finish: 'error', cause: 'none', divergence: { part: 'first' } })
    expect(failed).not.toHaveProperty('uncached')
    expect(retry).toMatchObject({ finish: 'stop', divergence: { part: 'none' }, expected: failed!.chars })
  })

  it("the first request of a session reuses the family's system and tools; departing from another session's history breaks nothing", async () => {
    const harness = await mount()
    const one = await startSession(harness, 'one')
    await step(harness, one)
    const two = await harness.ctx.sessions.create('two')
    two.append('user/message', { message: createUserMessage('Another task.') }, 'append')
    const request = conversationRequest(two)
    await step(harness, two)
    const offset = charsBeforeMessage(request, 0)
    expect(observations(two)[0]).toMatchObject({
      divergence: { part: 'message', index: 0, role: 'user', charOffset: offset },
      cause: 'none',
      expected: offset,
    })
  })

  it('a request without a session is logged nowhere, but its prefix counts for the later requests of its family', async () => {
    const harness = await mount()
    const shared = createUserMessage('Shared project notes.')
    await send(harness, { ...BASE, messages: [shared] })
    const session = await harness.ctx.sessions.create('after')
    session.append('user/message', { message: shared }, 'append')
    const request = conversationRequest(session)
    await send(harness, request)
    expect(observations(session)).toEqual([
      expect.objectContaining({
        divergence: { part: 'none' },
        cause: 'none',
        expected: new Fingerprinter(canonicalJson).fingerprint(request).chars,
      }),
    ])
  })

  it('warns once when a request names a session the store does not hold, and still answers', async () => {
    const harness = await mount()
    await send(harness, { ...BASE, messages: [createUserMessage('hi')], sessionId: 'ghost' })
    await send(harness, { ...BASE, messages: [createUserMessage('hi')], sessionId: 'ghost' })
    expect(harness.warnings).toEqual([
      'CacheLedger: session ghost is not open in ctx.sessions, or was opened before the ledger was mounted, so its cache/observation events are not logged (said once per session)',
    ])
    harness.warnings.length = 0
  })

  it('still sends a request it cannot fingerprint (a NaN temperature), says so, and logs nothing for it', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    const result = await send(harness, conversationRequest(session, { temperature: Number.NaN }))
    expect(result.finishReason).toBe('stop')
    expect(observations(session)).toEqual([])
    expect(harness.warnings).toEqual([
      'CacheLedger: could not observe a conversation request to p/m: canonicalJson: $ is NaN, which JSON cannot represent',
    ])
    harness.warnings.length = 0
  })

  it('stops logging to a session once the store has closed it', async () => {
    const harness = await mount()
    const session = await startSession(harness)
    await step(harness, session)
    await harness.ctx.sessions.close(session)
    await send(harness, conversationRequest(session))
    expect(observations(session)).toHaveLength(1)
    expect(harness.warnings).toEqual([
      `CacheLedger: session ${session.id} was closed, so the cache/observation events of requests sent for it since are not logged (said once per session)`,
    ])
    harness.warnings.length = 0
  })
})
