import type { GenerateOptions, Message } from '@warmfold/llm'
import { canonicalJson, createMessage, createUserMessage, textBlock, toolCallBlock } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { afterEach, describe, expect, it } from 'vitest'
import { CacheGuardError } from '../src/index.ts'
import { charsBefore, Fingerprinter } from '../src/prefix/index.ts'
import type { LedgerHarness } from './ledger-fixture.ts'
import {
  BASE,
  finish,
  guards,
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

const INSTRUCTION = 'Write a checkpoint summary of the conversation so far.'

async function mount(guard?: 'warn' | 'refuse' | 'off'): Promise<{ harness: LedgerHarness; session: Session }> {
  const harness = await mountLedger(guard ? { ledger: { guard } } : {})
  harnesses.push(harness)
  const session = await startSession(harness)
  for (let index = 0; index < 3; index++) await step(harness, session)
  return { harness, session }
}

/** A summary call replaying messages `0..end` of the surface, plus the instruction. */
function summaryCall(
  session: Session,
  end: number,
  overrides: Partial<GenerateOptions> = {},
  messages?: readonly Message[],
): GenerateOptions {
  return {
    ...BASE,
    maxTokens: 500,
    ...overrides,
    messages: [...(messages ?? session.deriveMessages().slice(0, end + 1)), createUserMessage(INSTRUCTION)],
    purpose: 'compaction',
    sessionId: session.id,
  }
}

describe('summary guard: a summary call must replay the last conversation request plus one instruction', () => {
  it('lets a warm replay through silently; its observation expects everything before the instruction', async () => {
    const { harness, session } = await mount('refuse')
    const request = summaryCall(session, 4)
    await send(harness, request)
    expect(guards(session)).toEqual([])
    const print = new Fingerprinter(canonicalJson).fingerprint(request)
    expect(observations(session).at(-1)).toMatchObject({
      purpose: 'compaction',
      divergence: { part: 'none' },
      cause: 'none',
      expected: charsBefore(print, print.messages.at(-1)!.start),
    })
  })

  it('accepts a region that runs past the last request into messages appended since (they were never cached anyway)', async () => {
    const { harness, session } = await mount('refuse')
    session.append('user/message', { message: createUserMessage('One more thing: keep the API.') }, 'append')
    await send(harness, summaryCall(session, session.surface.nodes.length - 1))
    expect(guards(session)).toEqual([])
  })

  it('warn: logs cache/guard before the call, names the part, and sends the call anyway', async () => {
    const { harness, session } = await mount()
    const { tools: _tools, ...toolless } = summaryCall(session, 4)
    let loggedBeforeSent = false
    harness.reply = (request) => {
      if (request.purpose === 'compaction') loggedBeforeSent = guards(session).length === 1
      return undefined
    }
    await send(harness, toolless)
    const [guard] = guards(session)
    expect(guard).toMatchObject({
      action: 'warn',
      provider: 'p',
      model: 'm',
      divergence: { part: 'tools', index: 0, charOffset: 0 },
    })
    expect(guard!.reason).toBe(
      "the summary call's tool 0 differs from the last conversation request's (tools added, removed, reordered or changed) at character 0",
    )
    expect(loggedBeforeSent).toBe(true)
    expect(observations(session).at(-1)).toMatchObject({ purpose: 'compaction', cause: 'tools' })
  })

  it('refuse: throws a CacheGuardError before the adapter is called; the call leaves no observation', async () => {
    const { harness, session } = await mount('refuse')
    const sentBefore = harness.adapter.requests.length
    const observed = observations(session).length
    let caught: unknown
    await send(harness, summaryCall(session, 4, { reasoningEffort: 'low' })).catch((error: unknown) => {
      caught = error
    })
    expect(CacheGuardError.isInstance(caught)).toBe(true)
    const error = caught as CacheGuardError
    expect(error.divergence).toEqual({ part: 'envelope', field: 'reasoningEffort', charOffset: 0 })
    expect(error.message).toBe(`the cache guard refused the summary call of session ${session.id}: ${error.reason}`)
    expect(harness.adapter.requests.length).toBe(sentBefore)
    expect(observations(session)).toHaveLength(observed)
    expect(guards(session)).toEqual([
      {
        action: 'refuse',
        provider: 'p',
        model: 'm',
        divergence: error.divergence,
        reason:
          "the summary call's reasoningEffort differs from the last conversation request's, so it lands in another cache family",
      },
    ])
  })

  it('off: checks nothing, but the observation still names the break', async () => {
    const { harness, session } = await mount('off')
    await send(harness, summaryCall(session, 4, { system: 'You summarize conversations.' }))
    expect(guards(session)).toEqual([])
    expect(observations(session).at(-1)).toMatchObject({ cause: 'envelope', divergence: { part: 'system' } })
  })

  it('flags a region rewritten by a prune before the replay (the prune is the cause)', async () => {
    const { harness, session } = await mount()
    logPrune(session, 2)
    await send(harness, summaryCall(session, 4))
    expect(guards(session)[0]).toMatchObject({ divergence: { part: 'message', index: 2, role: 'user' } })
    expect(guards(session)[0]!.reason).toMatch(
      /^the summary call's message 2 \(user\) differs from the last conversation request's at character \d+: a compaction\/prune rewrote it since$/,
    )
    expect(observations(session).at(-1)).toMatchObject({ cause: 'prune' })
  })

  it('flags an instruction appended to the last replayed user message instead of following it', async () => {
    const { harness, session } = await mount()
    session.append('user/message', { message: createUserMessage('Now write the loader.') }, 'append')
    await step(harness, session)
    const region = session.deriveMessages().slice(0, 8)
    const last = region.at(-1)!
    expect(last.role).toBe('user')
    const merged = [
      ...region.slice(0, -1),
      createMessage({ role: 'user', content: [...last.content, textBlock(INSTRUCTION)] }),
    ]
    await send(harness, { ...summaryCall(session, 0), messages: merged })
    const guard = guards(session)[0]!
    expect(guard.reason).toBe(
      'the summary call is not a replay plus one instruction: the instruction was appended to the replayed message 7 (user) instead of following it as a message of its own',
    )
    // Everything up to the appended block is still a warm prefix.
    const print = new Fingerprinter(canonicalJson).fingerprint({ ...summaryCall(session, 0), messages: merged })
    expect(guard.divergence).toEqual({
      part: 'message',
      index: 7,
      role: 'user',
      charOffset: charsBefore(print, print.messages[7]!.start + 1),
    })
  })

  it('flags a summary call whose last message is not an instruction', async () => {
    const { harness, session } = await mount()
    await send(harness, { ...summaryCall(session, 0), messages: session.deriveMessages().slice(0, 5) })
    expect(guards(session)[0]!.reason).toBe(
      'the summary call is not a replay plus one instruction: its last message (message 4, user) is not an instruction: one user message of text',
    )
  })

  it('without a conversation request seen in this process, compares with the request the session would send now', async () => {
    const harness = await mountLedger({ ledger: { guard: 'warn' } })
    harnesses.push(harness)
    const session = await startSession(harness)
    session.append('request/header', {
      header: { config: { provider: 'p', model: 'm', reasoningEffort: 'high' }, system: BASE.system, tools: TOOLS },
      reason: 'resume',
    })
    session.append(
      'assistant/message',
      {
        message: createMessage({
          role: 'assistant',
          content: [textBlock('Reading.'), toolCallBlock('c1', 'read', '{}')],
          source: { kind: 'model', provider: 'p', model: 'm' },
        }),
      },
      'append',
    )
    await send(harness, summaryCall(session, 1))
    expect(guards(session)).toEqual([])
    await send(harness, summaryCall(session, 1, { tools: TOOLS.slice(1) }))
    expect(guards(session)[0]).toMatchObject({ divergence: { part: 'tools', index: 0 } })
  })
})
