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
import { createTestContext } from '@warmfold/test-utils'
import type { TestContext } from '@warmfold/test-utils'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TokenMeter } from '../src/index.ts'
import { BLOCK_OVERHEAD, CHARS_PER_TOKEN, heuristicTextTokens, IMAGE_TOKENS, ROLE_OVERHEAD } from '../src/estimate.ts'

// Expected values are written out from the README formula, never taken from the code under
// test: text(s) = ceil(s.length / 4); a message is 4 + its blocks; text, reasoning and
// tool-call blocks add 4; a tool result is 4 + its inner blocks; an image is 1000.
const text = (value: string) => Math.ceil(value.length / 4)
const origin = { provider: 'p', model: 'm' }
// Any code point but a lone surrogate, as `fc.string({ unit: 'binary' })` draws them (which takes
// fast-check over a second for 100 strings of up to 200 code points).
const anyCodePoints = fc
  .array(
    fc.nat({ max: 0x10ffff - 0x800 }).map((point) => (point >= 0xd800 ? point + 0x800 : point)),
    { maxLength: 200 },
  )
  .map((points) => String.fromCodePoint(...points))

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

describe('the default heuristic', () => {
  it('exports the documented constants', () => {
    expect({ CHARS_PER_TOKEN, ROLE_OVERHEAD, BLOCK_OVERHEAD, IMAGE_TOKENS }).toEqual({
      CHARS_PER_TOKEN: 4,
      ROLE_OVERHEAD: 4,
      BLOCK_OVERHEAD: 4,
      IMAGE_TOKENS: 1000,
    })
  })

  it('prices a text message: 4 + ceil(length / 4) + 4', () => {
    // 21 code units -> 6 tokens.
    expect(meter.estimateMessage(createUserMessage('Fix the failing test.'))).toBe(4 + 6 + 4)
    expect(meter.estimateMessage(createUserMessage('abcd'))).toBe(4 + 1 + 4)
    expect(meter.estimateMessage(createUserMessage('abcde'))).toBe(4 + 2 + 4)
    expect(meter.estimateMessage(createUserMessage([textBlock('')]))).toBe(4 + 0 + 4)
  })

  it('counts UTF-16 code units, so an astral character is 2', () => {
    // Two emoji = 4 code units = 1 token; three = 6 code units = 2 tokens.
    expect(meter.estimateMessage(createUserMessage('😀😀'))).toBe(4 + 1 + 4)
    expect(meter.estimateMessage(createUserMessage('😀😀😀'))).toBe(4 + 2 + 4)
  })

  it('prices reasoning, text and tool-call blocks of an assistant message', () => {
    const message = createAssistantMessage(
      [
        reasoningBlock('Let me look.', 'opaque-signature'),
        textBlock('Reading.'),
        toolCallBlock('call-1', 'read_file', '{"path":"src/a.ts"}'),
      ],
      origin,
    )
    // reasoning 12 -> 3 (signature not counted), text 8 -> 2, name 9 -> 3, arguments 19 -> 5.
    expect(meter.estimateMessage(message)).toBe(4 + (3 + 4) + (2 + 4) + (3 + 5 + 4))
  })

  it('prices a tool result with text and an image: 4 + (4 + inner blocks)', () => {
    const message = createToolResultMessage('call-1', [
      textBlock('0123456789'),
      imageBlock('image/png', 'iVBORw0KGgo='.repeat(100)),
    ])
    // inner text 10 -> 3 + 4; the image is 1000 whatever its data length.
    expect(meter.estimateMessage(message)).toBe(4 + (4 + (3 + 4) + 1000))
    expect(meter.estimateMessage(createToolResultMessage('call-2', 'ok'))).toBe(4 + (4 + (1 + 4)))
  })

  it('prices the system prompt: text + 4, or 0 when absent or empty', () => {
    // 31 code units -> 8 tokens.
    expect(meter.estimateSystem('You are a careful coding agent.')).toBe(8 + 4)
    expect(meter.estimateSystem('')).toBe(0)
    expect(meter.estimateSystem()).toBe(0)
  })

  it('prices tools as their canonical JSON + 4, whatever the key order, or 0 when none', () => {
    const tools: ToolDefinition[] = [
      {
        name: 'read',
        description: 'Read a file',
        parameters: { type: 'object', properties: { path: { type: 'string' } } },
      },
    ]
    const reordered: ToolDefinition[] = [
      {
        parameters: { properties: { path: { type: 'string' } }, type: 'object' },
        description: 'Read a file',
        name: 'read',
      },
    ]
    const canonical =
      '[{"description":"Read a file","name":"read","parameters":{"properties":{"path":{"type":"string"}},"type":"object"}}]'
    expect(meter.estimateTools(tools)).toBe(text(canonical) + 4)
    expect(meter.estimateTools(reordered)).toBe(text(canonical) + 4)
    expect(meter.estimateTools([])).toBe(0)
    expect(meter.estimateTools()).toBe(0)
  })

  it('prices any text message as 8 + ceil(length / 4), for full unicode', () => {
    fc.assert(
      fc.property(anyCodePoints, (value) => {
        expect(heuristicTextTokens(value)).toBe(text(value))
        expect(meter.estimateMessage(createUserMessage([textBlock(value)]))).toBe(4 + text(value) + 4)
        expect(meter.estimateSystem(value)).toBe(value === '' ? 0 : text(value) + 4)
      }),
    )
  })
})
