import { describe, expect, it } from 'vitest'
import type { ContentBlock, Message } from '../src/index.ts'
import {
  canonicalJson,
  createAssistantMessage,
  createMessage,
  createToolResultMessage,
  createUserMessage,
  imageBlock,
  isToolResultMessage,
  promptView,
  reasoningBlock,
  textBlock,
  toolCallBlock,
  toolResultBlock,
} from '../src/index.ts'
import { unfrozenPaths } from './fixture.ts'

const origin = { provider: 'p', model: 'm' }

describe('message constructors', () => {
  const messages: Array<[string, Message]> = [
    ['a user message', createUserMessage('hello')],
    [
      'an assistant message',
      createAssistantMessage([reasoningBlock('r', 'sig'), textBlock('t'), toolCallBlock('c', 'f', '{}')], origin),
    ],
    [
      'a tool-result message',
      createToolResultMessage('c', [textBlock('out'), imageBlock('image/png', 'aGk=')], { isError: true }),
    ],
    [
      'a plugin message',
      createMessage({
        role: 'system',
        content: 'checkpoint',
        source: { kind: 'plugin', plugin: 'compaction', details: { range: [1, 2], meta: { a: 'b' } } },
      }),
    ],
  ]

  it.each(messages)('returns %s frozen at every depth', (_label, message) => {
    expect(unfrozenPaths(message)).toEqual([])
  })

  it('throws on mutation at every level', () => {
    const message = createAssistantMessage([toolCallBlock('c', 'f', '{}')], origin)
    expect(() => {
      ;(message as { role: string }).role = 'system'
    }).toThrow(TypeError)
    expect(() => {
      ;(message.content as ContentBlock[]).push(textBlock('x'))
    }).toThrow(TypeError)
    expect(() => {
      ;(message.content[0] as { arguments: string }).arguments = '{"x":1}'
    }).toThrow(TypeError)
    expect(() => {
      ;(message.source as { kind: string }).kind = 'user'
    }).toThrow(TypeError)
  })

  it("copies the caller's content and source instead of freezing or aliasing them", () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'a' }]
    const source = { kind: 'user' as const }
    const message = createMessage({ role: 'user', content, source })
    content.push({ type: 'text', text: 'b' })
    ;(content[0] as { text: string }).text = 'changed'
    expect(Object.isFrozen(source)).toBe(false)
    expect(message.content).toEqual([textBlock('a')])
  })

  it('keeps tool-call arguments byte for byte', () => {
    const raw = '{"b":1,  "a":2}'
    const message = createAssistantMessage([toolCallBlock('call_1', 'f', raw)], origin)
    const block = message.content[0]
    expect(block?.type === 'tool-call' && block.arguments).toBe(raw)
  })

  it('rejects an empty content, naming the field', () => {
    expect(() => createMessage({ role: 'user', content: [] })).toThrow(TypeError)
    expect(() => createMessage({ role: 'user', content: [] })).toThrow(
      'createMessage: content must contain at least one block',
    )
  })

  it('rejects an unknown role, naming the value and the accepted roles', () => {
    expect(() => createMessage({ role: 'tool' as never, content: 'x' })).toThrow(TypeError)
    expect(() => createMessage({ role: 'tool' as never, content: 'x' })).toThrow(
      'role must be one of system, user, assistant, got "tool"',
    )
  })

  it('requires a source for an assistant message and defaults it to user otherwise', () => {
    expect(() => createMessage({ role: 'assistant', content: 'x' })).toThrow('an assistant message needs a source')
    expect(createMessage({ role: 'system', content: 'x' }).source).toEqual({ kind: 'user' })
    expect(createUserMessage('x').source).toEqual({ kind: 'user' })
    expect(createAssistantMessage([textBlock('x')], origin).source).toEqual({
      kind: 'model',
      provider: 'p',
      model: 'm',
    })
  })

  it('turns string content into one text block and gives each message its own id unless one is given', () => {
    const first = createUserMessage('hello')
    const second = createUserMessage('hello')
    expect(first.content).toEqual([textBlock('hello')])
    expect(first.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(first.id).not.toBe(second.id)
    expect(createUserMessage('hello', 'fixed').id).toBe('fixed')
  })

  it('builds a tool-result message as a user message with one tool-result block and a tool source', () => {
    const message = createToolResultMessage('call_1', 'out', { isError: true, id: 'r1' })
    expect(message).toEqual({
      id: 'r1',
      role: 'user',
      content: [toolResultBlock('call_1', 'out', true)],
      source: { kind: 'tool', toolCallId: 'call_1' },
    })
  })
})

describe('isToolResultMessage', () => {
  it('is true only for a user message whose single block is a tool result', () => {
    const result = toolResultBlock('c', 'out')
    expect(isToolResultMessage(createToolResultMessage('c', 'out'))).toBe(true)
    expect(isToolResultMessage(createMessage({ role: 'user', content: [result] }))).toBe(true)
    expect(isToolResultMessage(createUserMessage('out'))).toBe(false)
    expect(isToolResultMessage(createMessage({ role: 'user', content: [result, textBlock('and more')] }))).toBe(false)
    expect(isToolResultMessage(createAssistantMessage([result], origin))).toBe(false)
  })
})

describe('promptView', () => {
  it('keeps role and content and omits id and source', () => {
    const message = createToolResultMessage('c', 'out', { id: 'r1' })
    const view = promptView(message)
    expect(Object.keys(view).toSorted()).toEqual(['content', 'role'])
    expect(view.role).toBe('user')
    expect(view.content).toBe(message.content)
  })

  it('renders the same bytes for messages that differ only in provenance', () => {
    const fromUser = createMessage({ role: 'user', content: 'same', id: 'a' })
    const fromPlugin = createMessage({
      role: 'user',
      content: 'same',
      id: 'b',
      source: { kind: 'plugin', plugin: 'x' },
    })
    expect(canonicalJson(fromUser)).not.toBe(canonicalJson(fromPlugin))
    expect(canonicalJson(promptView(fromUser))).toBe(canonicalJson(promptView(fromPlugin)))
  })
})
