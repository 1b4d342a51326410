import type { ToolDefinition } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  imageBlock,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { AnySessionEvent, SessionSurface } from '@warmfold/session'
import { Session } from '@warmfold/session'
import { createTestContext } from '@warmfold/test-utils'
import type { TestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { TokenMeter } from '../src/index.ts'

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

async function withMeter(
  config: TokenMeter.Config,
  body: (meter: TokenMeter, test: TestContext) => void | Promise<void>,
): Promise<void> {
  const test = await createTestContext()
  try {
    test.ctx.plugin(TokenMeter, config)
    await body(test.ctx.tokenMeter, test)
  } finally {
    await test.dispose()
  }
  test.assertClean()
}

const TOOLS: ToolDefinition[] = [{ name: 'read', description: 'Read', parameters: { type: 'object' } }]
const TOOLS_JSON = '[{"description":"Read","name":"read","parameters":{"type":"object"}}]'

describe('TokenMeter config', () => {
  it('loads with no config and with an empty one', async () => {
    const test = await createTestContext()
    test.ctx.plugin(TokenMeter)
    expect(test.ctx.tokenMeter.estimateSystem('abcd')).toBe(1 + 4)
    await test.dispose()
    test.assertClean()
    expect(TokenMeter.Config({})).toEqual({})
    expect(TokenMeter.Config(undefined)).toEqual({})
  })

  it('fails to load with an unknown key, naming it through internal/error', async () => {
    const test = await createTestContext()
    try {
      test.ctx.plugin(TokenMeter, { tokeniser: () => 1 } as never)
      expect(test.errors.map(messageOf)).toContainEqual(
        expect.stringContaining(
          'TokenMeter config: unknown key "tokeniser" (did you mean "tokenizer"?); known keys: tokenizer',
        ),
      )
      expect(test.ctx.get('tokenMeter')).toBeUndefined()
    } finally {
      await test.dispose()
    }
  })

  it('fails to load when tokenizer is not a function, naming the key', async () => {
    const test = await createTestContext()
    try {
      test.ctx.plugin(TokenMeter, { tokenizer: 'cl100k' } as never)
      expect(test.errors.map(messageOf)).toContainEqual(expect.stringContaining('tokenizer'))
    } finally {
      await test.dispose()
    }
    expect(() => TokenMeter.Config({ tokenizer: 3 })).toThrow(/TokenMeter config: .*tokenizer/)
  })
})

describe('the tokenizer option', () => {
  it('is used for every text the meter prices', async () => {
    const calls: string[] = []
    await withMeter({ tokenizer: (text) => (calls.push(text), 7) }, (meter) => {
      const message = createAssistantMessage(
        [reasoningBlock('think', 'sig'), textBlock('say'), toolCallBlock('id-1', 'read', '{"p":1}')],
        { provider: 'p', model: 'm' },
      )
      expect(meter.estimateMessage(message)).toBe(4 + (7 + 4) + (7 + 4) + (7 + 7 + 4))
      expect(calls).toEqual(['think', 'say', 'read', '{"p":1}'])

      calls.length = 0
      const result = createToolResultMessage('id-1', [textBlock('out'), imageBlock('image/png', 'AAAA')])
      expect(meter.estimateMessage(result)).toBe(4 + (4 + (7 + 4) + 1000))
      expect(calls).toEqual(['out'])

      calls.length = 0
      expect(meter.estimateSystem('sys')).toBe(7 + 4)
      expect(meter.estimateTools(TOOLS)).toBe(7 + 4)
      expect(calls).toEqual(['sys', TOOLS_JSON])

      calls.length = 0
      const session = new Session('tokenizer')
      session.append('request/header', {
        header: { config: { provider: 'p', model: 'm' }, system: 'sys', tools: TOOLS },
        reason: 'initial',
      })
      session.append('user/message', { message: createUserMessage('hello') }, 'append')
      const measurement = meter.measure(session)
      expect(measurement.envelopeTokens).toBe(7 + 4 + 7 + 4)
      expect(measurement.surfaceTokens).toBe(4 + 7 + 4)
      expect(calls.toSorted()).toEqual(['hello', 'sys', TOOLS_JSON].toSorted())
    })
  })

  it('rounds a fractional count up', async () => {
    await withMeter({ tokenizer: () => 2.25 }, (meter) => {
      expect(meter.estimateSystem('x')).toBe(3 + 4)
    })
  })

  it.each([
    [Number.NaN, 'NaN'],
    [-1, '-1'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    ['12', '"12"'],
    [undefined, 'undefined'],
  ])('rejects a tokenizer result of %s, naming it', async (value, named) => {
    await withMeter({ tokenizer: () => value as number }, (meter) => {
      expect(() => meter.estimateMessage(createUserMessage('text'))).toThrow(RangeError)
      expect(() => meter.estimateMessage(createUserMessage('text'))).toThrow(
        `the tokenizer returned ${named} for a text of 4 code units`,
      )
      expect(() => meter.estimateSystem('text')).toThrow(named)
      const session = new Session('bad')
      session.append('user/message', { message: createUserMessage('text') }, 'append')
      expect(() => meter.measure(session)).toThrow(named)
    })
  })

  it('leaves the session state consistent after a tokenizer error, so a later measure is exact', async () => {
    let broken = false
    await withMeter({ tokenizer: (text) => (broken && text === 'bad' ? -5 : text.length) }, async (meter) => {
      const session = new Session('recover')
      session.append('user/message', { message: createUserMessage('good') }, 'append')
      meter.measure(session)
      broken = true
      session.append('user/message', { message: createUserMessage('bad') }, 'append')
      session.append('user/message', { message: createUserMessage('fine') }, 'append')
      expect(() => meter.measure(session)).toThrow('returned -5')
      broken = false
      const fresh = await createTestContext()
      fresh.ctx.plugin(TokenMeter, { tokenizer: (text: string) => text.length })
      const expected = fresh.ctx.tokenMeter.measure(session)
      const measured = meter.measure(session)
      expect(measured.surfaceTokens).toBe(4 + 4 + 4 + (4 + 3 + 4) + (4 + 4 + 4))
      expect({ ...measured, nodes: measured.nodes }).toEqual({ ...expected, nodes: expected.nodes })
      await fresh.dispose()
      fresh.assertClean()
    })
  })
})

describe('TokenMeter.measure', () => {
  it('measures an empty session as zero', async () => {
    await withMeter({}, (meter) => {
      const measurement = meter.measure(new Session('empty'))
      expect(measurement.nodes).toEqual([])
      expect(measurement).toMatchObject({
        surfaceTokens: 0,
        envelopeTokens: 0,
        totalTokens: 0,
        baseline: { kind: 'heuristic', tokens: 0 },
      })
    })
  })

  it('returns a frozen measurement with frozen nodes, and the same object while nothing is logged', async () => {
    await withMeter({}, (meter) => {
      const session = new Session('frozen')
      session.append('user/message', { message: createUserMessage('abcdefgh') }, 'append')
      const measurement = meter.measure(session)
      expect(Object.isFrozen(measurement)).toBe(true)
      expect(Object.isFrozen(measurement.baseline)).toBe(true)
      expect(Object.isFrozen(measurement.nodes)).toBe(true)
      expect(Object.isFrozen(measurement.nodes[0])).toBe(true)
      expect(measurement.nodes).toBe(measurement.nodes)
      expect(meter.measure(session)).toBe(measurement)
      session.append('user/message', { message: createUserMessage('x') }, 'append')
      expect(meter.measure(session)).not.toBe(measurement)
      expect(measurement.nodes).toHaveLength(1)
    })
  })

  it('reads only the new events, never the whole surface', async () => {
    class CountingSession extends Session {
      eventReads = 0
      surfaceReads = 0
      override eventAt(seq: number): AnySessionEvent | undefined {
        this.eventReads += 1
        return super.eventAt(seq)
      }
      override get surface(): SessionSurface {
        this.surfaceReads += 1
        return super.surface
      }
    }
    await withMeter({}, (meter) => {
      const session = new CountingSession('counting')
      for (let index = 0; index < 1000; index++)
        session.append('user/message', { message: createUserMessage(`note ${index}`) }, 'append')
      meter.measure(session)
      expect(session.eventReads).toBe(1000)
      session.eventReads = 0
      session.surfaceReads = 0
      session.append('user/message', { message: createUserMessage('one more') }, 'append')
      session.append('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' })
      const measurement = meter.measure(session)
      expect(measurement.surfaceTokens).toBeGreaterThan(0)
      expect(measurement.totalTokens).toBe(measurement.surfaceTokens)
      expect(session.eventReads).toBe(2)
      expect(session.surfaceReads).toBe(0)
    })
  })

  it('keeps separate state per meter for the same session', async () => {
    const first = await createTestContext()
    const second = await createTestContext()
    first.ctx.plugin(TokenMeter, {})
    second.ctx.plugin(TokenMeter, { tokenizer: () => 1 })
    const session = new Session('shared')
    session.append('user/message', { message: createUserMessage('abcdefghijkl') }, 'append')
    expect(first.ctx.tokenMeter.measure(session).surfaceTokens).toBe(4 + 3 + 4)
    session.append('user/message', { message: createUserMessage('abcd') }, 'append')
    expect(second.ctx.tokenMeter.measure(session).surfaceTokens).toBe((4 + 1 + 4) * 2)
    expect(first.ctx.tokenMeter.measure(session).surfaceTokens).toBe(4 + 3 + 4 + (4 + 1 + 4))
    for (const test of [first, second]) {
      await test.dispose()
      test.assertClean()
    }
  })
})

describe('TokenMeter.priceOf', () => {
  it('prices current and shadowed surface events, and refuses other seqs', async () => {
    await withMeter({}, (meter) => {
      const session = new Session('price')
      session.append('request/header', { header: { config: { provider: 'p', model: 'm' } }, reason: 'initial' })
      session.append('user/message', { message: createUserMessage('abcdefgh') }, 'append')
      session.append(
        'user/message',
        { message: createUserMessage('summary', 's') },
        { op: 'replace', start: 0, end: 0, sourceEventSeqs: [1] },
      )
      expect(meter.priceOf(session, 1)).toBe(4 + 2 + 4)
      expect(meter.priceOf(session, 2)).toBe(4 + 2 + 4)
      expect(meter.measure(session).nodes).toEqual([{ seq: 2, tokens: 4 + 2 + 4 }])
      expect(() => meter.priceOf(session, 0)).toThrow(
        'seq 0 of session price is a request/header event, not a surface node',
      )
      expect(() => meter.priceOf(session, 3)).toThrow(RangeError)
      expect(() => meter.priceOf(session, -1)).toThrow('seq -1 is not in session price')
      expect(() => meter.priceOf(session, 1.5)).toThrow(RangeError)
    })
  })
})
