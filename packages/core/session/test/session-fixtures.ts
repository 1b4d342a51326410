import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import fc from 'fast-check'
import type { Session } from '../src/index.ts'

/** One scripted operation against a session. */
export type Operation =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; calls: number }
  | { kind: 'result'; text: string }
  | { kind: 'header'; effort: string }
  | { kind: 'replace'; from: number; span: number; text: string; keep?: boolean[] }

/** Random operation sequences; replace positions are fractions resolved against the live surface. */
export const operations = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant('user' as const), text: fc.string({ minLength: 1, maxLength: 40 }) }),
    fc.record({
      kind: fc.constant('assistant' as const),
      text: fc.string({ minLength: 1, maxLength: 40 }),
      calls: fc.integer({ min: 0, max: 2 }),
    }),
    fc.record({ kind: fc.constant('result' as const), text: fc.string({ unit: 'binary', maxLength: 30 }) }),
    fc.record({ kind: fc.constant('header' as const), effort: fc.constantFrom('low', 'high', 'max') }),
    // `keep[i]` keeps the run's i-th node after the new node; the run's last node is always shadowed.
    fc.record({
      kind: fc.constant('replace' as const),
      from: fc.nat(1000),
      span: fc.integer({ min: 1, max: 4 }),
      text: fc.string({ minLength: 1, maxLength: 20 }),
      keep: fc.array(fc.boolean(), { maxLength: 3 }),
    }),
  ),
  { maxLength: 60 },
)

/** Applies `operations` to `session` with deterministic ids; returns the number applied. */
export function applyOperations(session: Session, list: readonly Operation[]): void {
  let counter = 0
  const id = () => `m${counter++}`
  for (const operation of list) {
    switch (operation.kind) {
      case 'user':
        session.append('user/message', { message: createUserMessage(operation.text, id()) }, 'append')
        break
      case 'assistant': {
        const calls = Array.from({ length: operation.calls }, (_, index) =>
          toolCallBlock(`call-${counter}-${index}`, 'read', `{"path":"f${index}"}`),
        )
        session.append(
          'assistant/message',
          {
            message: createAssistantMessage([textBlock(operation.text), ...calls], { provider: 'p', model: 'm' }, id()),
          },
          'append',
        )
        break
      }
      case 'result':
        session.append(
          'tool/result',
          { message: createToolResultMessage(`call-${counter}`, operation.text || 'ok', { id: id() }) },
          'append',
        )
        break
      case 'header':
        session.append('request/header', {
          header: { config: { provider: 'p', model: 'm', reasoningEffort: operation.effort } },
          reason: 'change',
        })
        break
      case 'replace': {
        const nodes = session.surface.nodes
        if (nodes.length === 0) break
        const start = operation.from % nodes.length
        const end = Math.min(nodes.length - 1, start + operation.span - 1)
        const run = nodes.slice(start, end + 1)
        const keep = run.filter((_, index) => index < run.length - 1 && operation.keep?.[index] === true)
        session.append(
          'user/message',
          { message: createUserMessage(operation.text, id()) },
          {
            op: 'replace',
            start,
            end,
            sourceEventSeqs: run.filter((seq) => !keep.includes(seq)),
            ...(keep.length ? { keep } : {}),
          },
        )
        break
      }
    }
  }
}
