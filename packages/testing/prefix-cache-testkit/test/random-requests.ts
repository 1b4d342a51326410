import type { GenerateOptions, Message } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import fc from 'fast-check'
import { letters, ROUTE, TOOLS } from './prefix-cache-fixture.ts'

/** Messages that share prefixes with each other, so random requests share prefixes too. */
const POOL: readonly Message[] = [
  createUserMessage('alpha beta gamma'),
  createUserMessage('alpha bravo charlie'),
  createUserMessage(letters(1, 700)),
  createUserMessage(`${letters(1, 350)}${letters(2, 350)}`),
  createAssistantMessage([textBlock('reading'), toolCallBlock('c1', 'read_file', '{"path":"a.ts"}')], ROUTE),
  createAssistantMessage([textBlock('reading'), toolCallBlock('c1', 'read_file', '{"path":"b.ts"}')], ROUTE),
  createToolResultMessage('c1', letters(3, 900)),
  createToolResultMessage('c1', `${letters(3, 450)}x`),
]

const SYSTEMS = [undefined, 'You are careful.', letters(42, 5000)]
const EFFORTS = [undefined, 'low', 'high']

export const requestArbitrary = fc.record({
  messages: fc.array(fc.nat(POOL.length - 1), { maxLength: 10 }),
  system: fc.nat(SYSTEMS.length - 1),
  tools: fc.nat(2),
  effort: fc.nat(EFFORTS.length - 1),
  session: fc.constantFrom('a', 'b', undefined),
  purpose: fc.constantFrom('conversation', 'conversation', 'compaction'),
  waitMs: fc.constantFrom(0, 60_000, 299_999, 300_000, 300_001),
})

export type Drawn = typeof requestArbitrary extends fc.Arbitrary<infer T> ? T : never

export function build(drawn: Drawn): GenerateOptions {
  return {
    ...ROUTE,
    messages: drawn.messages.map((index) => POOL[index]!),
    system: SYSTEMS[drawn.system],
    tools: drawn.tools === 0 ? undefined : TOOLS.slice(0, drawn.tools + 1),
    reasoningEffort: EFFORTS[drawn.effort],
    sessionId: drawn.session,
    purpose: drawn.purpose,
  }
}

/** The family key, written out independently of `familyOf`. */
export function envelopeOf(options: GenerateOptions): string {
  return JSON.stringify([
    options.provider,
    options.model,
    options.reasoningEffort ?? null,
    options.temperature ?? null,
    options.stop ?? null,
  ])
}
