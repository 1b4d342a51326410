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

/** Claude Code's summary instruction (the replay path), as measured: appended to the last user message. */
const CLAUDE_CODE_INSTRUCTION =
  'CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n' +
  'Your task is to create a detailed summary of the conversation so far, paying close attention to the ' +
  "user's explicit requests and your previous actions."
const CLAUDE_SUMMARIZER_SYSTEM = 'You are a helpful AI assistant tasked with summarizing conversations.'

const T0 = Date.parse('2026-12-04T12:00:00Z')

type Block = Record<string, unknown>
type Message = { role: string; content: Block[] | string }

/** A Claude Code conversation request: thinking with signatures, tool_use / tool_result pairs, tool_choice. */
function claudeConversation(): Record<string, unknown> {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Refactor the retry logic in src/http.ts.' }] },
  ]
  for (let step = 0; step < 6; step++)
    messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: `Step ${step}: look at the next file.`, signature: `EqQBCkYIBxgCKkD${step}` },
          { type: 'tool_use', id: `toolu_${step}`, name: 'read_file', input: { path: `src/http${step}.ts` } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `toolu_${step}`, content: sourceText(`http${step}`, 40) }],
      },
    )
  return {
    model: 'claude-sonnet-4-6',
    max_tokens: 32_000,
    thinking: { type: 'enabled', budget_tokens: 16_000 },
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.a1b; cc_entrypoint=cli' },
      { type: 'text', text: agentSystemPrompt('Claude Code'), cache_control: { type: 'ephemeral' } },
    ],
    tools: TOOL_NAMES.map((name) => ({ name, description: `The ${name} tool.`, input_schema: parameters('path') })),
    tool_choice: { type: 'auto' },
    messages,
    metadata: { user_id: 'user_abc_account_def_session_0001' },
    stream: true,
  }
}

describe('warm summaries: Claude Code (Anthropic Messages)', () => {
  it('forwards its already-warm summary request untouched, counted as a summary', () => {
    const conversation = claudeConversation()
    const messages = conversation.messages as Message[]
    const last = messages.at(-1) as Message
    const summary = {
      ...conversation,
      messages: [
        ...messages.slice(0, -1),
        { ...last, content: [...(last.content as Block[]), { type: 'text', text: CLAUDE_CODE_INSTRUCTION }] },
      ],
    }
    const memory = new HeldMemory([remembered('anthropic-messages', conversation, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('anthropic-messages', summary, T0 + 1_000), summary, memory)
    expect(plan.action).toBe('forward')
    expect(plan.action === 'forward' && plan.summary?.agent).toBe('claude-code')
    expect(plan.action === 'forward' && plan.reason).toMatch(/already warm/)
    expect(memory.calls).toBe(0)
  })

  it('rewrites the summarizer-system path inside the last user message, after its tool results', () => {
    const conversation = claudeConversation()
    const summary = {
      model: 'claude-sonnet-4-6',
      max_tokens: 8_000,
      system: [{ type: 'text', text: CLAUDE_SUMMARIZER_SYSTEM }],
      messages: [
        ...(conversation.messages as Message[]),
        { role: 'user', content: 'Summarize the conversation above.' },
      ],
      stream: false,
    }
    const memory = new HeldMemory([remembered('anthropic-messages', conversation, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('anthropic-messages', summary, T0 + 2_000), summary, memory)
    const body = rewrittenBody(plan)
    expect(plan.action === 'rewrite' && plan.recognition.agent).toBe('claude-code')
    expect(prefixShare('anthropic-messages', conversation, body).share).toBeGreaterThanOrEqual(0.98)
    expect(prefixShare('anthropic-messages', conversation, summary).share).toBeLessThan(0.98)
    // tool_choice, thinking, system, tools untouched; max_tokens above the thinking budget; stream as asked.
    expect(body.tool_choice).toEqual(conversation.tool_choice)
    expect(body.thinking).toEqual(conversation.thinking)
    expect(body.system).toEqual(conversation.system)
    expect(body.tools).toEqual(conversation.tools)
    expect(body.max_tokens as number).toBeGreaterThan(16_000)
    expect(body.stream).toBe(false)
    const messages = body.messages as Message[]
    const before = conversation.messages as Message[]
    expect(messages).toHaveLength(before.length)
    expect(messages.slice(0, -1)).toEqual(before.slice(0, -1))
    // Thinking blocks and their signatures byte for byte.
    const thinking = (list: Message[]) =>
      list.flatMap((message) => (message.content as Block[]).filter((block) => block.type === 'thinking'))
    expect(thinking(messages)).toEqual(thinking(before))
    // Every tool_use is answered by a tool_result in the next (user) message.
    messages.forEach((message, index) => {
      const uses = (message.content as Block[]).filter((block) => block.type === 'tool_use').map((block) => block.id)
      if (!uses.length) return
      const next = messages[index + 1] as Message
      expect(next.role).toBe('user')
      const results = (next.content as Block[])
        .filter((block) => block.type === 'tool_result')
        .map((block) => block.tool_use_id)
      expect(results).toEqual(uses)
    })
    const last = (messages.at(-1) as Message).content as Block[]
    expect(last[0]?.type).toBe('tool_result')
    expect(last.at(-1)?.type).toBe('text')
    expect(last.at(-1)?.text).toContain(CLAUDE_SUMMARIZER_SYSTEM)
    expect(last.at(-1)?.text).toContain('Summarize the conversation above.')
    expect(last.at(-1)?.text).toContain(TEXT_ONLY_GUARD)
    if (plan.action === 'rewrite') {
      expect(plan.diff).toContain('max_tokens: 8000 → 24000 (above the thinking budget of 16000)')
      expect(plan.diff).toContain('tool_choice: absent → {"type":"auto"}')
      expect(plan.diff.filter((line) => line.startsWith('max_tokens'))).toHaveLength(1)
      expect(plan.diff.at(-1)).toMatch(/inside the last user message, after its tool results$/)
    }
  })

  it('leaves a summary request alone when the conversation forces a tool call', () => {
    const conversation: Record<string, unknown> = {
      ...claudeConversation(),
      tool_choice: { type: 'tool', name: 'read_file' },
    }
    const summary = {
      model: 'claude-sonnet-4-6',
      max_tokens: 8_000,
      system: CLAUDE_SUMMARIZER_SYSTEM,
      messages: [...(conversation.messages as Message[]), { role: 'user', content: 'Summarize.' }],
    }
    const memory = new HeldMemory([remembered('anthropic-messages', conversation, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('anthropic-messages', summary, T0 + 1), summary, memory)
    expect(plan).toMatchObject({
      action: 'forward',
      reason:
        'the conversation forces a tool call ({"type":"tool","name":"read_file"}): a replay keeps that and could not ' +
        'answer in text',
      summary: { agent: 'claude-code' },
    })
  })
})
