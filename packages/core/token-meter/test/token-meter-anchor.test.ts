import type { Message, TokenUsage, ToolDefinition } from '@warmfold/llm'
import { createAssistantMessage, createToolResultMessage, createUserMessage, textBlock } from '@warmfold/llm'
import type { RequestHeader } from '@warmfold/session'
import { Session } from '@warmfold/session'
import { createTestContext } from '@warmfold/test-utils'
import type { TestContext } from '@warmfold/test-utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TokenMeter } from '../src/index.ts'

// Hand-computed prices (formula: 4 per message, 4 per block, ceil(length / 4) per text).
const user = createUserMessage('abcdefgh', 'u1') //                                    4 + (2 + 4) = 10
const assistant = createAssistantMessage([textBlock('hello world!')], { provider: 'p', model: 'm' }, 'a1') // 4 + (3 + 4) = 11
const result = createToolResultMessage('c1', 'x'.repeat(10), { id: 'r1' }) //          4 + (4 + (3 + 4)) = 15
const followup = createUserMessage('next', 'u2') //                                    4 + (1 + 4) = 9
const USER = 10
const ASSISTANT = 11
const RESULT = 15
const FOLLOWUP = 9

const READ: ToolDefinition = { name: 'read', description: 'Read', parameters: { type: 'object' } }
const WRITE: ToolDefinition = { name: 'write', description: 'Write', parameters: { type: 'object' } }
const SYSTEM = 'You are terse.' // 14 -> 4 tokens, + 4
const HEADER: RequestHeader = {
  config: { provider: 'p', model: 'm', reasoningEffort: 'high' },
  system: SYSTEM,
  tools: [READ, WRITE],
}
const TOOLS_JSON =
  '[{"description":"Read","name":"read","parameters":{"type":"object"}},{"description":"Write","name":"write","parameters":{"type":"object"}}]'
const ENVELOPE = 4 + 4 + Math.ceil(TOOLS_JSON.length / 4) + 4
const USAGE: TokenUsage = { inputTokens: 100, cacheReadTokens: 900, cacheWriteTokens: 20, outputTokens: 7 }
const REPORTED = 1020

let test: TestContext
let meter: TokenMeter
beforeEach(async () => {
  test = await createTestContext()
  test.ctx.plugin(TokenMeter, {})
  meter = test.ctx.tokenMeter
})
afterEach(async () => {
  await test.dispose()
  test.assertClean()
})

/**
 * header (unless `header: null`), user, assistant with `usage` (none when `usage: null`): the
 * assistant message is seq 2 (seq 1 without a header).
 */
function conversation(options: { usage?: TokenUsage | null; header?: RequestHeader | null } = {}): Session {
  const usage = options.usage === undefined ? USAGE : (options.usage ?? undefined)
  const header = options.header === undefined ? HEADER : (options.header ?? undefined)
  const session = new Session('anchor')
  if (header) session.append('request/header', { header, reason: 'initial' })
  session.append('user/message', { message: user }, 'append')
  session.append('assistant/message', usage ? { message: assistant, usage } : { message: assistant }, 'append')
  return session
}

function append(session: Session, message: Message): void {
  if (message.content[0]?.type === 'tool-result')
    session.append('tool/result', { message: message as typeof result }, 'append')
  else if (message.role === 'assistant') session.append('assistant/message', { message }, 'append')
  else session.append('user/message', { message }, 'append')
}

function changeHeader(session: Session, header: RequestHeader): void {
  session.append('request/header', { header, reason: 'change' })
}

describe('provider usage as anchor', () => {
  it('is used when the envelope matches and the surface only grew: reported + appended estimates', () => {
    const session = conversation()
    append(session, result)
    append(session, followup)
    const measurement = meter.measure(session)
    expect(measurement.envelopeTokens).toBe(ENVELOPE)
    expect(measurement.surfaceTokens).toBe(USER + ASSISTANT + RESULT + FOLLOWUP)
    // The anchor's own message and everything after it were not in the reported request.
    expect(measurement.baseline).toEqual({
      kind: 'usage',
      tokens: REPORTED + ASSISTANT + RESULT + FOLLOWUP,
      anchorSeq: 2,
      reportedPromptTokens: REPORTED,
    })
    expect(measurement.totalTokens).toBe(REPORTED + ASSISTANT + RESULT + FOLLOWUP)
  })

  it('uses the latest assistant message with a prompt total; later messages without usage only add', () => {
    const session = conversation()
    append(session, result)
    session.append('assistant/message', { message: assistant, usage: { inputTokens: 5000 } }, 'append') // seq 4
    append(session, followup)
    session.append('assistant/message', { message: assistant, usage: { outputTokens: 3 } }, 'append') // no prompt total
    expect(meter.measure(session).baseline).toEqual({
      kind: 'usage',
      tokens: 5000 + ASSISTANT + FOLLOWUP + ASSISTANT,
      anchorSeq: 4,
      reportedPromptTokens: 5000,
    })
  })

  it('is used when the header is logged again with the same canonical content', () => {
    const session = conversation()
    // Key order does not change the canonical header, so this is the same envelope.
    changeHeader(session, {
      tools: [READ, WRITE],
      system: SYSTEM,
      config: { reasoningEffort: 'high', model: 'm', provider: 'p' },
    })
    append(session, followup)
    expect(meter.measure(session).baseline).toEqual({
      kind: 'usage',
      tokens: REPORTED + ASSISTANT + FOLLOWUP,
      anchorSeq: 2,
      reportedPromptTokens: REPORTED,
    })
  })

  it('is used when neither the anchor nor now has a header', () => {
    const session = conversation({ header: null })
    append(session, followup)
    const measurement = meter.measure(session)
    expect(measurement.envelopeTokens).toBe(0)
    expect(measurement.baseline).toEqual({
      kind: 'usage',
      tokens: REPORTED + ASSISTANT + FOLLOWUP,
      anchorSeq: 1,
      reportedPromptTokens: REPORTED,
    })
  })

  const heuristicTotal = ENVELOPE + USER + ASSISTANT + FOLLOWUP
  const changes: [string, RequestHeader, number][] = [
    ['a different reasoning effort', { ...HEADER, config: { ...HEADER.config, reasoningEffort: 'low' } }, ENVELOPE],
    [
      'a different system prompt',
      { ...HEADER, system: 'You are chatty.' },
      4 + 4 + Math.ceil(TOOLS_JSON.length / 4) + 4,
    ],
    ['the tools in another order', { ...HEADER, tools: [WRITE, READ] }, ENVELOPE],
    ['a different temperature', { ...HEADER, config: { ...HEADER.config, temperature: 0.2 } }, ENVELOPE],
    ['another model', { ...HEADER, config: { ...HEADER.config, model: 'm2' } }, ENVELOPE],
  ]
  it.each(changes)('is refused after a header change to %s', (_, header, envelope) => {
    const session = conversation()
    changeHeader(session, header)
    append(session, followup)
    const measurement = meter.measure(session)
    expect(measurement.envelopeTokens).toBe(envelope)
    expect(measurement.baseline).toEqual({ kind: 'heuristic', tokens: envelope + USER + ASSISTANT + FOLLOWUP })
    expect(measurement.totalTokens).toBe(envelope + USER + ASSISTANT + FOLLOWUP)
  })

  it('is used again when the header changes back to the anchor envelope', () => {
    const session = conversation()
    changeHeader(session, { ...HEADER, system: 'You are chatty.' })
    expect(meter.measure(session).baseline.kind).toBe('heuristic')
    changeHeader(session, HEADER)
    append(session, followup)
    expect(meter.measure(session).baseline).toEqual({
      kind: 'usage',
      tokens: REPORTED + ASSISTANT + FOLLOWUP,
      anchorSeq: 2,
      reportedPromptTokens: REPORTED,
    })
  })

  it('is refused when the anchor had no header and one is in force now', () => {
    const session = conversation({ header: null })
    changeHeader(session, HEADER)
    expect(meter.measure(session).baseline).toEqual({ kind: 'heuristic', tokens: heuristicTotal - FOLLOWUP })
  })

  it('is refused after a replace, even of nodes before the anchor, and until a newer anchor arrives', () => {
    const session = conversation()
    append(session, followup)
    expect(meter.measure(session).baseline.kind).toBe('usage')
    // Replace the first user message (position 0) with a shorter one: 4 + (1 + 4) = 9.
    session.append(
      'user/message',
      { message: createUserMessage('hi', 'u0') },
      { op: 'replace', start: 0, end: 0, sourceEventSeqs: [1] },
    )
    append(session, result)
    const afterReplace = meter.measure(session)
    expect(afterReplace.surfaceTokens).toBe(9 + ASSISTANT + FOLLOWUP + RESULT)
    expect(afterReplace.baseline).toEqual({ kind: 'heuristic', tokens: ENVELOPE + 9 + ASSISTANT + FOLLOWUP + RESULT })
    // A newer assistant message with usage (seq 6) is a fresh anchor.
    session.append('assistant/message', { message: assistant, usage: { inputTokens: 42 } }, 'append')
    expect(meter.measure(session).baseline).toEqual({
      kind: 'usage',
      tokens: 42 + ASSISTANT,
      anchorSeq: 6,
      reportedPromptTokens: 42,
    })
  })

  it('is refused when the assistant message with usage is itself a replace, without falling back to an older anchor', () => {
    const session = conversation()
    append(session, followup)
    session.append(
      'assistant/message',
      { message: assistant, usage: { inputTokens: 42 } },
      { op: 'replace', start: 2, end: 2, sourceEventSeqs: [3] },
    )
    expect(meter.measure(session).baseline).toEqual({
      kind: 'heuristic',
      tokens: ENVELOPE + USER + ASSISTANT + ASSISTANT,
    })
  })

  it('is not used when the usage has no prompt fields', () => {
    for (const usage of [
      { outputTokens: 12 },
      { outputTokens: 12, reasoningTokens: 4, raw: { total_tokens: 99 } },
      null,
    ]) {
      const session = conversation({ usage })
      append(session, followup)
      expect(meter.measure(session).baseline).toEqual({ kind: 'heuristic', tokens: heuristicTotal })
    }
  })

  it('counts a usage that reports only cache buckets', () => {
    const session = conversation({ usage: { cacheReadTokens: 0 } })
    expect(meter.measure(session).baseline).toEqual({
      kind: 'usage',
      tokens: ASSISTANT,
      anchorSeq: 2,
      reportedPromptTokens: 0,
    })
  })
})
