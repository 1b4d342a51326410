import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { WarmSummaryPlanner } from '../src/index.ts'
import { HeldMemory, inbound, prefixShare, remembered } from './warm-support.ts'

type Step = { kind: 'reply'; answer: string; user: string } | { kind: 'tools'; thinking: boolean; results: string[] }
type Record_ = Record<string, unknown>

const QWEN_SYSTEM = 'You are the component that summarizes a conversation when its context window is about to overflow.'
const QWEN_INSTRUCTION = 'First, reason in your <analysis> block. Then, produce the <state_snapshot> XML.'
const CLAUDE_SYSTEM = 'You are a helpful AI assistant tasked with summarizing conversations.'

const text = fc.string({ minLength: 1, maxLength: 60 })
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('reply' as const), answer: text, user: text }),
  fc.record({
    kind: fc.constant('tools' as const),
    thinking: fc.boolean(),
    results: fc.array(text, { minLength: 1, maxLength: 3 }),
  }),
)
const conversationArb = fc.record({ task: text, steps: fc.array(step, { maxLength: 8 }), answered: fc.boolean() })

function chatMessages(task: string, steps: readonly Step[]): Record_[] {
  const messages: Record_[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: task },
  ]
  steps.forEach((entry, index) => {
    if (entry.kind === 'reply')
      messages.push({ role: 'assistant', content: entry.answer }, { role: 'user', content: entry.user })
    else {
      const calls = entry.results.map((_, call) => ({
        id: `c${index}_${call}`,
        type: 'function',
        function: { name: 'shell', arguments: '{}' },
      }))
      messages.push({ role: 'assistant', content: null, tool_calls: calls })
      entry.results.forEach((result, call) =>
        messages.push({ role: 'tool', tool_call_id: `c${index}_${call}`, content: result }),
      )
    }
  })
  return messages
}

function anthropicMessages(task: string, steps: readonly Step[]): Record_[] {
  const messages: Record_[] = [{ role: 'user', content: [{ type: 'text', text: task }] }]
  steps.forEach((entry, index) => {
    if (entry.kind === 'reply')
      messages.push(
        { role: 'assistant', content: [{ type: 'text', text: entry.answer }] },
        { role: 'user', content: entry.user },
      )
    else {
      const thinking = entry.thinking ? [{ type: 'thinking', thinking: `plan ${index}`, signature: `sig${index}` }] : []
      const uses = entry.results.map((_, call) => ({
        type: 'tool_use',
        id: `t${index}_${call}`,
        name: 'shell',
        input: {},
      }))
      messages.push({ role: 'assistant', content: [...thinking, ...uses] })
      messages.push({
        role: 'user',
        content: entry.results.map((result, call) => ({
          type: 'tool_result',
          tool_use_id: `t${index}_${call}`,
          content: result,
        })),
      })
    }
  })
  return messages
}

function request(api: RequestApi, task: string, steps: readonly Step[]): Record_ {
  if (api === 'openai-chat')
    return {
      model: 'm',
      messages: chatMessages(task, steps),
      tools: [{ type: 'function', function: { name: 'shell', parameters: { type: 'object' } } }],
      stream: true,
    }
  return {
    model: 'claude-sonnet-4-6',
    max_tokens: 20_000,
    thinking: { type: 'enabled', budget_tokens: 10_000 },
    system: 'You are a coding agent.',
    tools: [{ name: 'shell', input_schema: { type: 'object' } }],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    messages: anthropicMessages(task, steps),
  }
}

/** The agent's summary request: its own system prompt, no tools, the history (and the answer since), its instruction. */
function summaryOf(api: RequestApi, conversation: Record_, answered: boolean): Record_ {
  const history = (conversation.messages as Record_[]).filter((message) => message.role !== 'system')
  const answer = answered ? [{ role: 'assistant', content: 'Done.' }] : []
  if (api === 'openai-chat')
    return {
      model: 'm',
      messages: [
        { role: 'system', content: QWEN_SYSTEM },
        ...history,
        ...answer,
        { role: 'user', content: QWEN_INSTRUCTION },
      ],
      max_tokens: 4_000,
    }
  return {
    model: 'claude-sonnet-4-6',
    max_tokens: 4_000,
    system: CLAUDE_SYSTEM,
    messages: [...history, ...answer, { role: 'user', content: [{ type: 'text', text: 'Summarize.' }] }],
  }
}

function blocks(message: Record_): Record_[] {
  return Array.isArray(message.content) ? (message.content as Record_[]) : []
}

function expectValid(api: RequestApi, messages: Record_[]): void {
  expect(messages.at(-1)?.role).toBe('user')
  messages.forEach((message, index) => {
    if (api === 'openai-chat' && message.role === 'tool') {
      const caller = messages.slice(0, index).findLast((earlier) => earlier.role !== 'tool') as Record_
      expect((caller.tool_calls as Record_[]).map((call) => call.id)).toContain(message.tool_call_id)
    }
    if (api === 'anthropic-messages' && message.role === 'assistant') {
      const uses = blocks(message)
        .filter((block) => block.type === 'tool_use')
        .map((block) => block.id)
      if (!uses.length) return
      const next = messages[index + 1] as Record_
      expect(next.role).toBe('user')
      const results = blocks(next).filter((block) => block.type === 'tool_result')
      expect(results.map((block) => block.tool_use_id)).toEqual(uses)
    }
  })
}

describe('warm summaries: property', () => {
  for (const api of ['openai-chat', 'anthropic-messages'] as const)
    it(`${api}: the rewrite extends the conversation's JSON messages byte for byte and stays valid`, () => {
      fc.assert(
        fc.property(conversationArb, ({ task, steps, answered }) => {
          const conversation = request(api, task, steps)
          const summary = summaryOf(api, conversation, answered)
          const memory = new HeldMemory([remembered(api, conversation, 0)])
          const plan = new WarmSummaryPlanner().plan(inbound(api, summary, 1_000), summary, memory)
          if (plan.action !== 'rewrite') throw new Error(`not rewritten: ${plan.reason}`)
          const body = JSON.parse(plan.body.toString()) as Record_
          const before = JSON.stringify(conversation.messages)
          const after = JSON.stringify(body.messages)
          const inside = plan.diff.at(-1)?.endsWith('after its tool results') === true
          // A new message: everything up to the list's closing bracket; inside: up to the last content's.
          expect(after.startsWith(inside ? before.slice(0, -3) : before.slice(0, -1))).toBe(true)
          expect(after.slice(inside ? before.length - 3 : before.length - 1).startsWith(',')).toBe(true)
          const { share, chars } = prefixShare(api, conversation, body)
          expect(share * chars).toBeGreaterThanOrEqual(inside ? chars - '],"role":"user"}'.length : chars)
          expectValid(api, body.messages as Record_[])
          for (const key of ['tools', 'tool_choice', 'thinking', 'system'])
            expect(body[key], key).toEqual(conversation[key])
          if (api === 'anthropic-messages') expect(body.max_tokens as number).toBeGreaterThan(10_000)
        }),
        { numRuns: 150 },
      )
    })
})
