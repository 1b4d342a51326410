import type { Message } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { Session } from '@warmfold/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { balancedCuts, toolPairingBalancedAfter, toolPairingBalancedBefore } from '../src/index.ts'
import { isBalancedCut } from '../src/tool-pairing.ts'

const ROUTE = { provider: 'p', model: 'm' }

/** One generated surface event: a plain user message, an assistant message with 0-3 calls, or a result. */
type Step = { kind: 'user' } | { kind: 'assistant'; calls: number } | { kind: 'result'; pick: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'user' as const }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('assistant' as const), calls: fc.integer({ min: 0, max: 3 }) }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('result' as const), pick: fc.nat(1000) }), weight: 3 },
)

type SurfaceEvent =
  | { type: 'user/message' | 'assistant/message'; message: Message }
  | { type: 'tool/result'; message: ReturnType<typeof createToolResultMessage> }

/**
 * Turns steps into messages with globally unique call ids. A result answers one of the calls that
 * are still open, chosen by `pick`, so results arrive in random order; with no open call it is skipped.
 */
class Script {
  private counter = 0
  private readonly open: string[] = []

  build(steps: readonly Step[]): SurfaceEvent[] {
    const events: SurfaceEvent[] = []
    for (const next of steps) {
      const id = `m${this.counter++}`
      if (next.kind === 'user') {
        events.push({ type: 'user/message', message: createUserMessage(`user ${id}`, id) })
      } else if (next.kind === 'assistant') {
        const calls = Array.from({ length: next.calls }, (_, index) =>
          toolCallBlock(`call-${id}-${index}`, 'read', `{"n":${index}}`),
        )
        this.open.push(...calls.map((call) => call.id))
        events.push({
          type: 'assistant/message',
          message: createAssistantMessage([textBlock(`reply ${id}`), ...calls], ROUTE, id),
        })
      } else if (this.open.length > 0) {
        const [callId] = this.open.splice(next.pick % this.open.length, 1) as [string]
        events.push({ type: 'tool/result', message: createToolResultMessage(callId, `result of ${callId}`, { id }) })
      }
    }
    return events
  }
}

/** Independent oracle: a cut is balanced when every call id before it has a result id before it. */
function oracleCuts(messages: readonly Message[]): boolean[] {
  return Array.from({ length: messages.length + 1 }, (_, cut) => {
    const before = messages.slice(0, cut).flatMap((message) => message.content)
    const calls = new Set(before.flatMap((block) => (block.type === 'tool-call' ? [block.id] : [])))
    const results = new Set(before.flatMap((block) => (block.type === 'tool-result' ? [block.toolCallId] : [])))
    return [...calls].every((id) => results.has(id))
  })
}

function appendAll(session: Session, events: readonly SurfaceEvent[]): void {
  for (const event of events) {
    if (event.type === 'tool/result') session.append('tool/result', { message: event.message }, 'append')
    else session.append(event.type, { message: event.message }, 'append')
  }
}

/** Asserts both helpers agree with the oracle at every surface node of `session`. */
function expectHelpersMatchOracle(session: Session): void {
  const expected = oracleCuts(session.deriveMessages())
  session.surface.nodes.forEach((seq, position) => {
    expect(toolPairingBalancedBefore(session, seq), `before seq ${seq} (position ${position})`).toBe(expected[position])
    expect(toolPairingBalancedAfter(session, seq), `after seq ${seq} (position ${position})`).toBe(
      expected[position + 1],
    )
  })
  expected.forEach((balanced, position) => expect(isBalancedCut(session, position)).toBe(balanced))
}

function expectNotOnSurface(session: Session, seq: number): void {
  expect(() => toolPairingBalancedBefore(session, seq)).toThrow(RangeError)
  expect(() => toolPairingBalancedBefore(session, seq)).toThrow(
    `seq ${seq} is not on the surface of session ${session.id}`,
  )
  expect(() => toolPairingBalancedAfter(session, seq)).toThrow(`seq ${seq} is not on the surface`)
}

describe('balancedCuts', () => {
  it('marks the cuts that separate no tool call from its result', () => {
    const messages = [
      createUserMessage('read both files'),
      createAssistantMessage(
        [textBlock('reading'), toolCallBlock('a', 'read', '{}'), toolCallBlock('b', 'read', '{}')],
        ROUTE,
      ),
      createToolResultMessage('b', 'B'),
      createToolResultMessage('a', 'A'),
      createAssistantMessage([textBlock('done')], ROUTE),
    ]
    expect(balancedCuts(messages)).toEqual([true, true, false, false, true, true])
  })

  it('is false at the end while a call still waits for its result', () => {
    const messages = [createUserMessage('go'), createAssistantMessage([toolCallBlock('a', 'read', '{}')], ROUTE)]
    expect(balancedCuts(messages)).toEqual([true, true, false])
    expect(balancedCuts([])).toEqual([true])
  })

  it('lets a result whose call is not before it open nothing', () => {
    expect(balancedCuts([createToolResultMessage('gone', 'orphan'), createUserMessage('next')])).toEqual([
      true,
      true,
      true,
    ])
  })

  it('agrees with the oracle on random interleavings of calls and results', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 50 }), (steps) => {
        const messages = new Script().build(steps).map((event) => event.message)
        expect(balancedCuts(messages)).toEqual(oracleCuts(messages))
      }),
      { numRuns: 300 },
    )
  })
})

describe('toolPairingBalancedBefore / toolPairingBalancedAfter', () => {
  it('agree with the surface cut positions, also after a replace and further appends', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 30 }),
        fc.nat(1000),
        fc.integer({ min: 1, max: 5 }),
        fc.array(step, { maxLength: 15 }),
        (first, from, span, second) => {
          const script = new Script()
          const session = new Session('pairing')
          session.append('request/header', { header: { config: ROUTE }, reason: 'initial' })
          appendAll(session, script.build(first))
          if (session.surface.nodes.length === 0)
            session.append('user/message', { message: createUserMessage('seed') }, 'append')
          expectHelpersMatchOracle(session)
          // The header is not a surface node; neither is a seq past the log.
          expectNotOnSurface(session, 0)
          expectNotOnSurface(session, session.length + 3)

          // A replace keeps the node count or shrinks it and bumps the generation: the cached cuts must not survive it.
          const nodes = session.surface.nodes
          const start = from % nodes.length
          const end = Math.min(nodes.length - 1, start + span - 1)
          const shadowed = nodes.slice(start, end + 1)
          const generation = session.surface.replaceGeneration
          session.append(
            'user/message',
            { message: createUserMessage('summary of the region') },
            { op: 'replace', start, end, sourceEventSeqs: shadowed },
          )
          expect(session.surface.replaceGeneration).toBe(generation + 1)
          expectHelpersMatchOracle(session)
          for (const seq of shadowed) expectNotOnSurface(session, seq)

          // Appends in the same generation change only the length.
          appendAll(session, script.build(second))
          expectHelpersMatchOracle(session)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('sees a replace that keeps the node count (same length, new generation)', () => {
    const session = new Session('same-length')
    session.append('user/message', { message: createUserMessage('go') }, 'append')
    session.append(
      'assistant/message',
      { message: createAssistantMessage([toolCallBlock('a', 'read', '{}')], ROUTE) },
      'append',
    )
    session.append('tool/result', { message: createToolResultMessage('a', 'A') }, 'append')
    expect(toolPairingBalancedAfter(session, 1)).toBe(false)
    expect(toolPairingBalancedAfter(session, 2)).toBe(true)
    // Replace the call with plain text: the result now answers nothing, so every cut is balanced.
    const replacement = session.append(
      'assistant/message',
      { message: createAssistantMessage([textBlock('no call')], ROUTE) },
      { op: 'replace', start: 1, end: 1, sourceEventSeqs: [1] },
    )
    expect(session.surface.nodes).toHaveLength(3)
    expect(toolPairingBalancedAfter(session, replacement.seq)).toBe(true)
    expect(toolPairingBalancedBefore(session, 2)).toBe(true)
    expectNotOnSurface(session, 1)
  })

  it('sees appends in the same generation', () => {
    const session = new Session('appends')
    session.append('user/message', { message: createUserMessage('go') }, 'append')
    expect(toolPairingBalancedAfter(session, 0)).toBe(true)
    session.append(
      'assistant/message',
      { message: createAssistantMessage([toolCallBlock('a', 'read', '{}')], ROUTE) },
      'append',
    )
    expect(toolPairingBalancedAfter(session, 1)).toBe(false)
    session.append('tool/result', { message: createToolResultMessage('a', 'A') }, 'append')
    expect(toolPairingBalancedBefore(session, 2)).toBe(false)
    expect(toolPairingBalancedAfter(session, 2)).toBe(true)
  })
})

describe('isBalancedCut', () => {
  it('rejects positions outside 0..n with a RangeError', () => {
    const session = new Session('range')
    session.append('user/message', { message: createUserMessage('one') }, 'append')
    expect(isBalancedCut(session, 0)).toBe(true)
    expect(isBalancedCut(session, 1)).toBe(true)
    for (const position of [-1, 2, 0.5, Number.NaN]) {
      expect(() => isBalancedCut(session, position)).toThrow(RangeError)
    }
    expect(() => isBalancedCut(session, 2)).toThrow('cut position 2 is outside 0..1 for session range')
  })
})
