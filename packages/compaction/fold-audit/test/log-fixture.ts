import type { ContentBlock, Message } from '@warmfold/llm'
import {
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  reasoningBlock,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { LoggedMessage } from '../src/index.ts'

const ROUTE = { provider: 'test', model: 'model' }

/** A message the user typed. */
export const user = (text: string): Message => createUserMessage(text)
/** An assistant message with text and, optionally, more blocks. */
export const assistant = (text: string, ...blocks: ContentBlock[]): Message =>
  createAssistantMessage([...(text === '' ? [] : [textBlock(text)]), ...blocks], ROUTE)
/** An assistant message holding one tool call; `args` is JSON-encoded unless it is a string. */
export const call = (id: string, name: string, args: unknown): Message =>
  createAssistantMessage([toolCallBlock(id, name, typeof args === 'string' ? args : JSON.stringify(args))], ROUTE)
/** An assistant message holding several tool calls: one step. */
export const calls = (...list: [id: string, name: string, args: unknown][]): Message =>
  createAssistantMessage(
    list.map(([id, name, args]) => toolCallBlock(id, name, typeof args === 'string' ? args : JSON.stringify(args))),
    ROUTE,
  )
/** The result of call `id`. */
export const result = (id: string, text: string, isError = false): Message =>
  createToolResultMessage(id, text, { isError })
/** A reasoning-only assistant message. */
export const reasoning = (text: string): Message => createAssistantMessage([reasoningBlock(text)], ROUTE)
/** A message a plugin wrote (a checkpoint, say). */
export const plugin = (text: string): Message =>
  createMessage({
    role: 'user',
    content: text,
    source: { kind: 'plugin', plugin: 'warmfold/compaction-checkpoint', details: { compactionId: 'c1' } },
  })

/** The messages as a log from seq `start` on, one seq each. */
export function logOf(messages: readonly Message[], start = 0): LoggedMessage[] {
  return messages.map((message, index) => ({ seq: start + index, message }))
}
