import { describe, expect, it } from 'vitest'
import { TEXT_ONLY_GUARD, WarmSummaryPlanner } from '../src/index.ts'
import {
  agentSystemPrompt,
  HeldMemory,
  inbound,
  parameters,
  prefixShare,
  remembered,
  rewrittenBody,
  sourceText,
  TOOL_NAMES,
} from './warm-support.ts'

/** The opening of Qwen Code's compression system prompt (packages/core/src/core/prompts.ts). */
const QWEN_COMPRESSION_PROMPT =
  'You are the component that summarizes a conversation when its context window is about to overflow. ' +
  "The summary you produce will become the agent's ONLY memory of everything that happened before this point.\n\n" +
  'First, wrap your reasoning in an <analysis> block. Then produce the final summary as the EXACT XML structure ' +
  'below.\n\n<state_snapshot>\n    <primary_request_and_intent>\n    </primary_request_and_intent>\n</state_snapshot>'
const QWEN_INSTRUCTION = 'First, reason in your <analysis> block. Then, produce the <state_snapshot> XML.'

const T0 = Date.parse('2026-12-04T12:00:00Z')

/** A Qwen Code conversation request (Chat Completions): system, tool calls, tool messages. */
function qwenConversation(): Record<string, unknown> {
  const messages: unknown[] = [
    { role: 'system', content: agentSystemPrompt('Qwen Code') },
    { role: 'user', content: 'Find why the date parser fails on leap years and fix it.' },
  ]
  for (let step = 0; step < 8; step++) {
    messages.push(
      {
        role: 'assistant',
        content: step % 2 ? `Reading more of the parser (${step}).` : null,
        tool_calls: [
          {
            id: `call_${step}`,
            type: 'function',
            function: { name: 'read_file', arguments: JSON.stringify({ path: `src/date${step}.ts` }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: `call_${step}`, content: sourceText(`date${step}`, 40) },
    )
  }
  return {
    model: 'qwen3-coder-plus',
    messages,
    tools: TOOL_NAMES.map((name) => ({
      type: 'function',
      function: { name, description: `The ${name} tool.`, parameters: parameters('path') },
    })),
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0.7,
    top_p: 0.8,
  }
}

/** Qwen Code's compression request: its own system prompt, the history, its instruction; no tools. */
function qwenSummary(conversation: Record<string, unknown>): Record<string, unknown> {
  const history = (conversation.messages as unknown[]).slice(1)
  return {
    model: 'qwen3-coder-plus',
    messages: [
      { role: 'system', content: QWEN_COMPRESSION_PROMPT },
      ...history,
      { role: 'assistant', content: 'The leap-year check used `% 100` before `% 400`; fixed.' },
      { role: 'user', content: QWEN_INSTRUCTION },
    ],
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0.7,
    top_p: 0.8,
    max_tokens: 20_000,
  }
}

describe('warm summaries: Qwen Code (Chat Completions, replaced-system shape)', () => {
  it('rewrites the compression request into the conversation request plus the summarizer text', () => {
    const conversation = qwenConversation()
    const summary = qwenSummary(conversation)
    const memory = new HeldMemory([remembered('openai-chat', conversation, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('openai-chat', summary, T0 + 20_000), summary, memory)
    const body = rewrittenBody(plan)
    expect(plan.action === 'rewrite' && plan.recognition).toMatchObject({ agent: 'qwen-code', confidence: 1 })
    expect(prefixShare('openai-chat', conversation, body).share).toBeGreaterThanOrEqual(0.98)
    expect(prefixShare('openai-chat', conversation, summary).share).toBeLessThan(0.98)
    const messages = body.messages as Record<string, unknown>[]
    const before = conversation.messages as unknown[]
    expect(messages.slice(0, before.length)).toEqual(before)
    expect(body.tools).toEqual(conversation.tools)
    expect(body.max_tokens).toBe(20_000)
    expect(body.stream_options).toEqual({ include_usage: true })
    // The answer since, then one new user message with the summarizer's system prompt and instruction.
    expect(messages.at(-2)).toEqual((summary.messages as unknown[]).at(-2))
    const last = messages.at(-1) as { role: string; content: string }
    expect(last.role).toBe('user')
    expect(last.content).toContain(QWEN_COMPRESSION_PROMPT)
    expect(last.content).toContain(QWEN_INSTRUCTION)
    expect(last.content.startsWith(TEXT_ONLY_GUARD)).toBe(true)
    // Every tool message follows the assistant message that called it.
    messages.forEach((message, index) => {
      if (message.role !== 'tool') return
      const caller = messages.slice(0, index).findLast((earlier) => earlier.role === 'assistant') as {
        tool_calls?: { id: string }[]
      }
      expect(caller.tool_calls?.map((call) => call.id)).toContain(message.tool_call_id)
    })
    if (plan.action === 'rewrite')
      expect(plan.diff).toEqual([
        `system: restored the conversation's system prompt (${agentSystemPrompt('Qwen Code').length} chars); ` +
          `the summarizer's (${QWEN_COMPRESSION_PROMPT.length} chars) moved into the final user message`,
        `tools: restored ${TOOL_NAMES.length} tools`,
        "messages: replayed the conversation's 17 in place of the summary request's 17, kept 1 more of the " +
          `summary request after them, appended the instruction (${last.content.length} chars) as a new user message`,
      ])
  })

  it('appends a new user message even when the conversation request ends in a user message', () => {
    const conversation = qwenConversation()
    const messages = [...(conversation.messages as unknown[]), { role: 'user', content: 'Also cover 1900.' }]
    const held = { ...conversation, messages }
    const summary = {
      ...qwenSummary(held),
      messages: [
        { role: 'system', content: QWEN_COMPRESSION_PROMPT },
        ...messages.slice(1),
        { role: 'user', content: QWEN_INSTRUCTION },
      ],
    }
    const plan = new WarmSummaryPlanner().plan(
      inbound('openai-chat', summary, T0 + 1),
      summary,
      new HeldMemory([remembered('openai-chat', held, T0)]),
    )
    const body = rewrittenBody(plan)
    expect((body.messages as unknown[]).length).toBe(messages.length + 1)
    expect((body.messages as unknown[]).slice(0, -1)).toEqual(messages)
  })

  it('leaves a summary request recognised by structure alone as it is, and says so', () => {
    const conversation = qwenConversation()
    const summary = {
      ...qwenSummary(conversation),
      messages: [
        { role: 'system', content: 'Condense the dialogue below for a later session.' },
        ...(conversation.messages as unknown[]).slice(1),
        { role: 'user', content: 'Write the condensed notes now.' },
      ],
    }
    const memory = new HeldMemory([remembered('openai-chat', conversation, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('openai-chat', summary, T0 + 1_000), summary, memory)
    expect(plan.action).toBe('forward')
    if (plan.action !== 'forward') return
    expect(plan.reason).toBe("a summary request by its structure, but no known agent's markers: left alone")
    expect(plan.summary).toMatchObject({ agent: 'structure', confidence: 0.6 })
    expect(plan.summary?.reason).toMatch(/system prompt changed, tools 8 → 0, ends in an instruction/)
  })

  it('forwards a tool-less chat turn that changes nothing, with no summary', () => {
    const first = {
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    }
    const second = {
      model: 'm',
      messages: [
        ...first.messages,
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'What is 2+2?' },
      ],
    }
    const memory = new HeldMemory([remembered('openai-chat', first, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('openai-chat', second, T0 + 1), second, memory)
    expect(plan).toEqual({ action: 'forward' })
  })

  it('passes a known summary request through when no conversation request is held', () => {
    const summary = qwenSummary(qwenConversation())
    const plan = new WarmSummaryPlanner().plan(inbound('openai-chat', summary, T0), summary, new HeldMemory([]))
    expect(plan).toMatchObject({
      action: 'forward',
      reason: 'no remembered conversation request: the proxy does not hold the conversation request it repeats',
      summary: { agent: 'qwen-code' },
    })
  })
})
