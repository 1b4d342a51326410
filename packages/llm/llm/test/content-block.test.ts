import { describe, expect, it } from 'vitest'
import type { ContentBlock } from '../src/index.ts'
import {
  canonicalJson,
  imageBlock,
  reasoningBlock,
  textBlock,
  textOf,
  toolCallBlock,
  toolResultBlock,
} from '../src/index.ts'
import { objectsWithin, unfrozenPaths } from './fixture.ts'

describe('content block constructors', () => {
  const blocks: Array<[string, ContentBlock]> = [
    ['text', textBlock('hi')],
    ['reasoning', reasoningBlock('thinking', 'sig')],
    ['image', imageBlock('image/png', 'aGk=')],
    ['tool-call', toolCallBlock('call_1', 'read', '{"path":"a"}')],
    ['tool-result', toolResultBlock('call_1', [textBlock('out'), imageBlock('image/png', 'aGk=')], true)],
  ]

  it.each(blocks)('returns a %s block frozen at every depth', (_type, block) => {
    expect(objectsWithin(block).length).toBeGreaterThan(0)
    expect(unfrozenPaths(block)).toEqual([])
  })

  it('throws on mutation, because modules run in strict mode', () => {
    const block = toolResultBlock('call_1', 'out')
    expect(() => {
      ;(block as { toolCallId: string }).toolCallId = 'other'
    }).toThrow(TypeError)
    expect(() => {
      ;(block.content as ContentBlock[]).push(textBlock('more'))
    }).toThrow(TypeError)
    expect(() => {
      ;(block.content[0] as { text: string }).text = 'changed'
    }).toThrow(TypeError)
    expect(block.toolCallId).toBe('call_1')
    expect(textOf(block.content as ContentBlock[])).toBe('out')
  })

  it('keeps tool-call arguments byte for byte, odd whitespace and key order included', () => {
    const raw = '{"b":1,  "a":2 }\n'
    const block = toolCallBlock('call_1', 'f', raw)
    expect(block.arguments).toBe(raw)
    expect(canonicalJson(block)).toContain(JSON.stringify(raw))
  })

  it("copies a tool result's content array instead of freezing the caller's", () => {
    const content = [textBlock('a')]
    const block = toolResultBlock('call_1', content)
    content.push(textBlock('b'))
    expect(Object.isFrozen(content)).toBe(false)
    expect(block.content).toHaveLength(1)
  })

  it('turns a string tool result into one text block', () => {
    expect(toolResultBlock('call_1', 'out').content).toEqual([textBlock('out')])
  })

  it('adds optional fields only when they carry information', () => {
    expect('signature' in reasoningBlock('r')).toBe(false)
    expect(reasoningBlock('r', 'sig').signature).toBe('sig')
    expect('signature' in textBlock('t')).toBe(false)
    expect(textBlock('t', 'sig-t')).toEqual({ type: 'text', text: 't', signature: 'sig-t' })
    expect('signature' in toolCallBlock('call_1', 'f', '{}')).toBe(false)
    expect(toolCallBlock('call_1', 'f', '{}', 'sig-c')).toEqual({
      type: 'tool-call',
      id: 'call_1',
      name: 'f',
      arguments: '{}',
      signature: 'sig-c',
    })
    expect('isError' in toolResultBlock('call_1', 'out')).toBe(false)
    expect('isError' in toolResultBlock('call_1', 'out', false)).toBe(false)
    expect(toolResultBlock('call_1', 'out', true).isError).toBe(true)
  })

  it('rejects a non-string field with a TypeError naming the field and the type received', () => {
    expect(() => textBlock(42 as never)).toThrow('textBlock(text) must be a string, got number')
    expect(() => toolCallBlock('call_1', 'f', { a: 1 } as never)).toThrow(
      'toolCallBlock(arguments) must be a string, got object',
    )
    expect(() => imageBlock(null as never, 'x')).toThrow('imageBlock(mediaType) must be a string, got null')
    expect(() => textBlock('t', 3 as never)).toThrow('textBlock(signature) must be a string, got number')
    expect(() => toolCallBlock('call_1', 'f', '{}', {} as never)).toThrow(
      'toolCallBlock(signature) must be a string, got object',
    )
  })

  it('textOf joins text blocks and leaves reasoning and tool calls out', () => {
    expect(textOf([reasoningBlock('hidden'), textBlock('a'), toolCallBlock('c', 'f', '{}'), textBlock('b')])).toBe('ab')
  })
})
