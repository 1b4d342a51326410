import fc from 'fast-check'
import type { Message } from '@warmfold/llm'
import { createAssistantMessage, createToolResultMessage, createUserMessage, toolCallBlock } from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { ArtifactExtractor } from '../src/index.ts'
import { MAX_LINE_CHARS, MAX_MESSAGE_CHARS } from '../src/scanned-lines.ts'

/**
 * The work of the regular-expression searches made while one message is read, counted without a
 * clock: every search goes through `RegExp.prototype.exec` once it is replaced (`test`, `replace`,
 * `split` and `matchAll` call it), and counts one step plus each character it passes over (from
 * where it starts to the end of its match, or of its input when it finds none). That is what a
 * search costs when it is linear; however a pattern backtracks, a search given at most
 * MAX_LINE_CHARS characters costs at most a constant, so the longest input given is checked too
 * (a search given more throws at once, before it runs).
 */
function readingWork(message: Message): { steps: number; longest: number } {
  const exec = RegExp.prototype.exec
  let steps = 0
  let longest = 0
  // oxlint-disable-next-line no-extend-native -- replacing exec (and putting it back) is how every search is counted
  RegExp.prototype.exec = function (this: RegExp, input: string) {
    if (input.length > MAX_LINE_CHARS)
      throw new Error(`a search of ${this} was given ${input.length} characters (more than ${MAX_LINE_CHARS})`)
    const from = this.global || this.sticky ? this.lastIndex : 0
    const match = exec.call(this, input)
    steps += 1 + (match === null ? (this.sticky ? 0 : input.length - from) : match.index + match[0].length - from)
    longest = Math.max(longest, input.length)
    return match
  }
  try {
    new ArtifactExtractor().read(message)
  } finally {
    // oxlint-disable-next-line no-extend-native -- the original exec, put back
    RegExp.prototype.exec = exec
  }
  return { steps, longest }
}

/** `unit` repeated to `length` characters after `prefix`. */
const grown = (prefix: string, unit: string, length: number): string =>
  prefix + unit.repeat(Math.ceil((length - prefix.length) / unit.length)).slice(0, length - prefix.length)

const numbers = (length: number, value: (index: number) => string): string => {
  let text = '['
  for (let index = 0; text.length < length - 1; index++) text += `${index === 0 ? '' : ','}${value(index)}`
  return `${text}]`
}

/** The inputs that took seconds to minutes before (issue [4.2], item 1), as one tool result of `length` characters. */
const FAMILIES: Record<string, (length: number) => string> = {
  'a JSON array of integers': (length) => numbers(length, (index) => String(index % 1000)),
  'a JSON array of numbers (an embedding)': (length) => numbers(length, (index) => String((index * 0.618) % 1)),
  'a URL followed by closing brackets': (length) => grown('see https://example.com/a', ')', length),
  'a run of dots in a URL': (length) => `${grown('https://example.com/', '.', length - 1)}a`,
  'a////b/': (length) => `${grown('a', '/', length - 2)}b/`,
  'Error: , , , x': (length) => `${grown('Error: ', ', ', length - 1)}x`,
  'a pre-release version followed by digits': (length) => `${grown('1.2.3-alpha', '1', length - 1)}x`,
  'a path listing': (length) => grown('', 'src/module-7/part-12/file-123.ts\n', length),
}
const SIZES = [16_000, 32_000, 64_000, 128_000, 256_000]

describe('reading a message is linear in its size and bounded per message', () => {
  for (const [family, make] of Object.entries(FAMILIES)) {
    it(`${family}: doubling the input at most doubles the work, up to the message bound; no search reads a long line`, () => {
      const work = SIZES.map((size) => readingWork(createToolResultMessage('call-1', make(size))))
      for (const { longest } of work) expect(longest).toBeLessThanOrEqual(MAX_LINE_CHARS)
      for (let index = 1; index < SIZES.length; index++)
        expect(work[index]!.steps).toBeLessThanOrEqual(2.2 * work[index - 1]!.steps + 100)
      // Past MAX_MESSAGE_CHARS nothing more is read.
      const bounded = SIZES.findIndex((size) => size > MAX_MESSAGE_CHARS)
      expect(work.at(-1)!.steps).toBeLessThanOrEqual(1.05 * work[bounded]!.steps)
    })
  }

  it('holds on random adversarial texts, as a tool result, a user message and a shell command', () => {
    const pieces = [
      ...'19.,)(/:#=-@"`|\\ \t\nax',
      'Error: ',
      'https://x.io/',
      '1.2.3-alpha',
      'exit code ',
      'ms',
      ' MB',
      '├─',
      '$ ',
      'src/a.ts',
      'key=',
      '#12',
    ]
    const messages: ((text: string) => Message)[] = [
      (text) => createToolResultMessage('call-1', text),
      (text) => createUserMessage(text),
      (text) =>
        createAssistantMessage([toolCallBlock('call-1', 'bash', JSON.stringify({ command: text }))], {
          provider: 'p',
          model: 'm',
        }),
    ]
    const unit = fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 12 }).map((parts) => parts.join(''))
    fc.assert(
      fc.property(fc.constantFrom('', ...pieces), unit, fc.constantFrom(...messages), (prefix, repeated, message) => {
        const [small, large] = [8_000, 16_000].map((size) => readingWork(message(grown(prefix, repeated, size))))
        return large!.longest <= MAX_LINE_CHARS && large!.steps <= 2.2 * small!.steps + 100
      }),
      { numRuns: 60 },
    )
  })
})
