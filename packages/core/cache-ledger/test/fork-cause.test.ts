import type { Message } from '@warmfold/llm'
import { canonicalJson, createAssistantMessage, createUserMessage, textBlock } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { CacheLedger } from '../src/index.ts'
import { Fingerprinter } from '../src/prefix/index.ts'
import type { LedgerHarness } from './ledger-fixture.ts'
import { conversationRequest, finish, mountLedger, observations, send, startSession, step } from './ledger-fixture.ts'

const harnesses: LedgerHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await finish(harness)
})

/** A parent with two steps sent, and a fork session holding the parent's last request plus a task. */
async function parentAndFork(ledger: Partial<CacheLedger.Config> = {}): Promise<{
  harness: LedgerHarness
  parent: Session
  fork: Session
  parentChars: number
}> {
  const harness = await mountLedger({ ledger: { providerToleranceTokens: 50, ...ledger } })
  harnesses.push(harness)
  let cached = 0
  harness.usage = (request) => {
    const prompt = Math.round(new Fingerprinter(canonicalJson).fingerprint(request).chars / 4)
    return {
      inputTokens: prompt - Math.min(cached, prompt),
      cacheReadTokens: Math.min(cached, prompt),
      outputTokens: 5,
    }
  }
  const parent = await startSession(harness, 'parent')
  await step(harness, parent)
  const last = conversationRequest(parent)
  await send(harness, last)
  const parentChars = new Fingerprinter(canonicalJson).fingerprint(last).chars
  const fork = await harness.ctx.sessions.create('parent.fork-1')
  for (const message of last.messages) {
    const type =
      message.role === 'assistant'
        ? 'assistant/message'
        : message.content[0]?.type === 'tool-result'
          ? 'tool/result'
          : 'user/message'
    fork.append(type, { message } as never, 'append')
  }
  fork.append('user/message', { message: createUserMessage('Find the callers of load.') }, 'append')
  Object.assign(harness, { setCached: (tokens: number) => (cached = tokens) })
  return { harness, parent, fork, parentChars }
}

const forkRequest = (fork: Session, messages?: readonly Message[]) => ({
  ...conversationRequest(fork),
  ...(messages ? { messages } : {}),
  cacheSessionId: 'parent',
})
const setCached = (harness: LedgerHarness, tokens: number) =>
  (harness as unknown as { setCached(tokens: number): void }).setCached(tokens)

describe('cache/observation of a fork: its first request is compared with the parent request it replays', () => {
  it('a read of the whole parent prefix is none, with that prefix expected', async () => {
    const { harness, fork, parentChars } = await parentAndFork()
    setCached(harness, Math.round(parentChars / 4))
    await send(harness, forkRequest(fork))
    expect(observations(fork)).toEqual([
      expect.objectContaining({ cause: 'none', divergence: { part: 'none' }, expected: parentChars }),
    ])
  })

  it('fork: the provider read less than the parent prefix the fork replays', async () => {
    const { harness, fork, parentChars } = await parentAndFork()
    setCached(harness, 0)
    await send(harness, forkRequest(fork))
    expect(observations(fork)).toEqual([
      expect.objectContaining({ cause: 'fork', divergence: { part: 'none' }, expected: parentChars, cached: 0 }),
    ])
  })

  it("fork: the first request departs from the parent's request (a message rewritten)", async () => {
    const { harness, fork } = await parentAndFork()
    setCached(harness, 0)
    const messages = [...fork.deriveMessages()]
    messages[1] = createAssistantMessage([textBlock('Rewritten by the host.')], { provider: 'p', model: 'm' })
    await send(harness, forkRequest(fork, messages))
    expect(observations(fork)[0]).toMatchObject({
      cause: 'fork',
      divergence: { part: 'message', index: 1, role: 'assistant' },
    })
  })

  it("the fork's later requests are compared with its own: a miss there is the provider's", async () => {
    const { harness, fork, parentChars } = await parentAndFork()
    setCached(harness, Math.round(parentChars / 4))
    await step(harness, fork, { cacheSessionId: 'parent' })
    setCached(harness, 0)
    await send(harness, forkRequest(fork))
    expect(observations(fork).map((observation) => observation.cause)).toEqual(['none', 'provider'])
  })

  it("expired: a fork sent after the parent's cache lifetime ran out is an expiry, not the fork's break", async () => {
    const { harness, fork } = await parentAndFork({ cacheTtlMs: { p: 300_000 } })
    setCached(harness, 0)
    harness.clock.now += 300_001
    await send(harness, forkRequest(fork))
    expect(observations(fork)).toEqual([
      expect.objectContaining({ cause: 'expired', divergence: { part: 'none' }, expected: 0, idleMs: 300_001 }),
    ])
  })

  it('within the lifetime, the same fork reads the parent prefix: none', async () => {
    const { harness, fork, parentChars } = await parentAndFork({ cacheTtlMs: { p: 300_000 } })
    setCached(harness, Math.round(parentChars / 4))
    harness.clock.now += 299_000
    await send(harness, forkRequest(fork))
    expect(observations(fork)).toEqual([
      expect.objectContaining({ cause: 'none', expected: parentChars, idleMs: 299_000 }),
    ])
  })
})
