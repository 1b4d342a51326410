import type { Message } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import { describe, expect, it } from 'vitest'
import { regionCoverage } from '../src/index.ts'

const ORIGIN = { provider: 'sim', model: 'coder' }

// The region's characters: 10 (user text) + 4 + 7 (tool call name and arguments) + 10 (tool result) = 31.
const REGION: readonly Message[] = [
  createUserMessage('0123456789'), // 10
  createAssistantMessage([toolCallBlock('c1', 'read', '{"p":1}')], ORIGIN), // 4 + 7
  createToolResultMessage('c1', 'abcdefghij'), // 10
]
const TOTAL = 10 + 4 + 7 + 10

describe('regionCoverage', () => {
  it('is 1 for an exact replay, whatever else the request carries', () => {
    expect(regionCoverage(REGION, { system: 'sys', messages: [...REGION, createUserMessage('Summarize.')] })).toBe(1)
  })

  it('counts a tool result cut to its first 4 characters as 4 of its 10', () => {
    const transcript = `user: 0123456789\nassistant: (tool call read) {"p":1}\n(tool result) abcd\n[… 6 more characters truncated]`
    expect(regionCoverage(REGION, { messages: [createUserMessage(transcript)] })).toBe((TOTAL - 6) / TOTAL)
  })

  it('counts a block with text appended in full (the long-instruction shape)', () => {
    const appended = createUserMessage([textBlock('0123456789'), textBlock('INSTRUCTION')])
    expect(regionCoverage(REGION, { messages: [appended, REGION[1] as Message, REGION[2] as Message] })).toBe(1)
  })

  it('credits only the leading part found: a rewritten middle loses the rest of its block', () => {
    // "0123" survives, "X" replaces "4", so 6 of the 10 characters of the first block are lost.
    const rewritten = createUserMessage('0123X56789')
    expect(regionCoverage(REGION, { messages: [rewritten, REGION[1] as Message, REGION[2] as Message] })).toBe(
      (TOTAL - 6) / TOTAL,
    )
  })

  it('finds a block in the system prompt, but never across two request blocks', () => {
    expect(regionCoverage([createUserMessage('abcdef')], { system: 'xxabcdefxx', messages: [] })).toBe(1)
    // "abc" and "def" are separate blocks of the request: only "abc" is carried as a prefix.
    expect(
      regionCoverage([createUserMessage('abcdef')], {
        messages: [createUserMessage([textBlock('abc'), textBlock('def')])],
      }),
    ).toBe(3 / 6)
  })

  it('is 0 when nothing of the region is sent, and 1 for a region without characters', () => {
    expect(regionCoverage(REGION, { system: '###', messages: [createUserMessage('###')] })).toBe(0)
    // The leading part is found anywhere: "a" and "r" of "Summarize." match by chance (2 of 31).
    expect(regionCoverage(REGION, { messages: [createUserMessage('Summarize.')] })).toBe(2 / TOTAL)
    expect(regionCoverage([], { messages: [createUserMessage('Summarize.')] })).toBe(1)
  })
})
