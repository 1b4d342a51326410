import type { ToolResultContent } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  imageBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import fc from 'fast-check'
import type { PruneBudget } from '../src/index.ts'
import { codePointLength } from '../src/index.ts'
import { PRUNE_MARKER_LENGTH } from '../src/prune-budget.ts'

/**
 * Whether `text` is well-formed UTF-16 (every surrogate is half of a pair). Node 20 has no
 * `String.prototype.isWellFormed`, so the pruner's tests bring their own.
 */
export function isWellFormed(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(index + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      index += 1
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return false
    }
  }
  return true
}

/** Valid small budgets: head + marker + tail + slack = threshold, so every draw passes the load check. */
export const budgets: fc.Arbitrary<PruneBudget> = fc
  .record({ headChars: fc.nat(40), tailChars: fc.nat(40), slack: fc.nat(40) })
  .map(({ headChars, tailChars, slack }) => ({
    headChars,
    tailChars,
    thresholdChars: headChars + PRUNE_MARKER_LENGTH + tailChars + slack,
  }))

/** Text with astral characters (`binary`: any code point but lone surrogates), graphemes or ASCII. */
export function texts(maxLength: number, minLength = 0): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: 'binary', minLength, maxLength }),
    fc.string({ unit: 'grapheme', minLength, maxLength }),
    fc.string({ unit: 'grapheme-ascii', minLength, maxLength }),
  )
}

const images = fc
  .record({ mediaType: fc.constantFrom('image/png', 'image/jpeg'), data: fc.base64String({ maxLength: 12 }) })
  .map(({ mediaType, data }) => imageBlock(mediaType, data))

/** Tool-result content: text blocks (some long) with images interleaved. */
export function contents(maxTextLength = 160): fc.Arbitrary<ToolResultContent[]> {
  return fc.array(
    fc.oneof({ arbitrary: texts(maxTextLength).map(textBlock), weight: 3 }, { arbitrary: images, weight: 1 }),
    { maxLength: 6 },
  )
}

/** Content guaranteed to be over any budget drawn from {@link budgets}: one long text block among others. */
export const overBudgetContents: fc.Arbitrary<ToolResultContent[]> = fc
  .tuple(contents(60), texts(260, 200).map(textBlock), contents(60))
  .map(([before, long, after]) => [...before, long, ...after])

/** Code points of the concatenated text blocks. */
export function textCodePoints(blocks: readonly ToolResultContent[]): string[] {
  return blocks.flatMap((block) => (block.type === 'text' ? Array.from(block.text) : []))
}

/** One tool result of a scripted session. */
export interface ResultSpec {
  /** Text size in code points (filled with a repeating pattern that includes an emoji). */
  size: number
  image?: boolean
  isError?: boolean
}

/** A long text of exactly `size` code points with astral characters in it. */
export function patternText(size: number, seed = 0): string {
  const alphabet = Array.from(`line ${seed}: build output 😀 ok\n`)
  return Array.from({ length: size }, (_, index) => alphabet[index % alphabet.length]).join('')
}

/**
 * Appends a scripted coding session: a user message, then per result an assistant message with
 * one tool call and its `tool/result` (tool name, turn and step set; failed results carry an
 * `error`), then a closing assistant message. Ids are deterministic.
 */
export function appendToolSession(session: Session, results: readonly ResultSpec[]): void {
  session.append('user/message', { message: createUserMessage('Fix the failing test.', 'u0') }, 'append')
  for (const [index, spec] of results.entries()) {
    const callId = `call-${index}`
    session.append(
      'assistant/message',
      {
        message: createAssistantMessage(
          [textBlock(`step ${index}`), toolCallBlock(callId, 'bash', `{"n":${index}}`)],
          { provider: 'p', model: 'm' },
          `a${index}`,
        ),
      },
      'append',
    )
    const content: ToolResultContent[] = [textBlock(patternText(spec.size, index))]
    if (spec.image)
      content.push(imageBlock('image/png', 'iVBORw0KGgo='), textBlock(patternText(spec.size, index + 100)))
    const message = createToolResultMessage(callId, content, { isError: spec.isError, id: `r${index}` })
    session.append(
      'tool/result',
      { message, toolName: 'bash', turn: 1, step: index + 1, ...(spec.isError ? { error: 'exit code 1' } : {}) },
      'append',
    )
  }
  session.append(
    'assistant/message',
    { message: createAssistantMessage([textBlock('done')], { provider: 'p', model: 'm' }, 'a-end') },
    'append',
  )
}

/**
 * Code points of the text blocks of one tool result, summed over all its text blocks (images
 * and other blocks count 0: they are never cut).
 */
export function measureContent(blocks: readonly ToolResultContent[]): number {
  let total = 0
  for (const block of blocks) if (block.type === 'text') total += codePointLength(block.text)
  return total
}
