import { describe, expect, it } from 'vitest'
import { TEXT_ONLY_GUARD, WarmSummaryPlanner } from '../src/index.ts'
import {
  agentSystemPrompt,
  holding,
  inbound,
  parameters,
  prefixShare,
  remembered,
  rewrittenBody,
  sourceText,
  TOOL_NAMES,
} from './warm-support.ts'

/** opencode's compaction agent prompt (packages/opencode/src/agent/prompt/compaction.txt), opening. */
const OPENCODE_SYSTEM =
  'You are a context summarization agent. You are given a conversation between a user and an agent. Your goal is ' +
  'to produce a structured summary matching the format specified so another coding agent can continue the work.'
const OPENCODE_INSTRUCTION =
  'Create a new anchored summary from the conversation history above.\n\n<template>\n## Goal\n- [single-sentence ' +
  'task summary]\n</template>'
/** pi's SUMMARIZATION_SYSTEM_PROMPT and SUMMARIZATION_PROMPT (coding-agent src/core/compaction), openings. */
const PI_SYSTEM =
  'You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding ' +
  'assistant, then produce a structured summary following the exact format specified.'
const PI_INSTRUCTION =
  'The messages above are a conversation to summarize. Create a structured context checkpoint summary that ' +
  'another LLM will use to continue the work.\n\nUse this EXACT format:\n\n## Goal'

const T0 = Date.parse('2026-12-04T12:00:00Z')
const LAST_ANSWER = 'All 31 tests pass now; the cache layer is done.'
const TASK = 'Add an LRU cache in front of the user lookup service.'

/** pi's serializeConversation: one line per message, tool results cut to 2,000 characters. */
function transcriptOf(outputs: readonly string[]): string {
  const parts = [`[User]: ${TASK}`]
  outputs.forEach((output, step) => {
    parts.push(`[Assistant tool calls]: read_file(path="src/cache${step}.ts")`)
    const cut =
      output.length > 2000
        ? `${output.slice(0, 2000)}\n\n[... ${output.length - 2000} more characters truncated]`
        : output
    parts.push(`[Tool result]: ${cut}`)
  })
  parts.push(`[Assistant]: ${LAST_ANSWER}`)
  return parts.join('\n\n')
}

const outputs = Array.from({ length: 6 }, (_, step) => sourceText(`cache${step}`, 50))

/** An opencode conversation request over Chat Completions (AI SDK openai-compatible). */
function opencodeConversation(): Record<string, unknown> {
  const messages: unknown[] = [
    { role: 'system', content: agentSystemPrompt('opencode') },
    { role: 'user', content: TASK },
  ]
  outputs.forEach((output, step) =>
    messages.push(
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: `c${step}`,
            type: 'function',
            function: { name: 'read_file', arguments: `{"path":"src/cache${step}.ts"}` },
          },
        ],
      },
      { role: 'tool', tool_call_id: `c${step}`, content: output },
    ),
  )
  const tools = TOOL_NAMES.map((name) => ({ type: 'function', function: { name, parameters: parameters('path') } }))
  return {
    model: 'deepseek-chat',
    messages,
    tools,
    tool_choice: 'auto',
    stream: true,
    stream_options: { include_usage: true },
  }
}

function opencodeSummary(): Record<string, unknown> {
  const text = `Here is the conversation so far:\n\n<conversation>\n${transcriptOf(outputs)}\n</conversation>\n\n${OPENCODE_INSTRUCTION}`
  return {
    model: 'deepseek-chat',
    messages: [
      { role: 'system', content: OPENCODE_SYSTEM },
      { role: 'user', content: text },
    ],
    max_tokens: 32_000,
    stream: true,
    stream_options: { include_usage: true },
  }
}

/** A pi conversation request over Anthropic Messages. */
function piConversation(): Record<string, unknown> {
  const messages: unknown[] = [{ role: 'user', content: [{ type: 'text', text: TASK }] }]
  outputs.forEach((output, step) =>
    messages.push(
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: `t${step}`, name: 'read_file', input: { path: `src/cache${step}.ts` } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${step}`, content: output }] },
    ),
  )
  const tools = TOOL_NAMES.map((name) => ({ name, description: name, input_schema: parameters('path') }))
  return {
    model: 'claude-haiku-4-5',
    max_tokens: 16_000,
    system: agentSystemPrompt('pi'),
    tools,
    messages,
    stream: true,
  }
}

function piSummary(): Record<string, unknown> {
  const text = `<conversation>\n${transcriptOf(outputs)}\n</conversation>\n\n${PI_INSTRUCTION}`
  return {
    model: 'claude-haiku-4-5',
    max_tokens: 13_107,
    system: PI_SYSTEM,
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    stream: true,
  }
}

describe('warm summaries: transcript agents (opencode, pi)', () => {
  it('replays the held history in place of opencode’s transcript (Chat)', () => {
    const conversation = opencodeConversation()
    const summary = opencodeSummary()
    const memory = holding(remembered('openai-chat', conversation, T0))
    const plan = new WarmSummaryPlanner().plan(inbound('openai-chat', summary, T0 + 40_000), summary, memory)
    const body = rewrittenBody(plan)
    expect(plan.action === 'rewrite' && plan.recognition).toMatchObject({ agent: 'opencode', confidence: 1 })
    expect(prefixShare('openai-chat', conversation, body).share).toBeGreaterThanOrEqual(0.98)
    expect(prefixShare('openai-chat', conversation, summary).share).toBeLessThan(0.98)
    const messages = body.messages as { role: string; content: string }[]
    expect(messages.slice(0, -1)).toEqual(conversation.messages)
    const last = messages.at(-1) as { role: string; content: string }
    expect(last.role).toBe('user')
    expect(last.content).toContain(OPENCODE_SYSTEM)
    expect(last.content).toContain(OPENCODE_INSTRUCTION)
    expect(last.content).toContain(TEXT_ONLY_GUARD)
    // The transcript is gone; the answer no request carried is kept from it.
    expect(last.content).not.toContain('<conversation>')
    expect(last.content).not.toContain('Here is the conversation so far')
    expect(last.content).toContain(`<conversation_since>\n[Assistant]: ${LAST_ANSWER}\n</conversation_since>`)
    expect(body.max_tokens).toBe(32_000)
    // Cheaper while warm: what is not read from the cache (the appended text) is less than the
    // transcript request prefills whole; and the summarizer sees every tool output in full.
    const warm = prefixShare('openai-chat', conversation, body)
    const rewrittenChars = prefixShare('openai-chat', body, body).chars
    const originalChars = prefixShare('openai-chat', summary, summary).chars
    expect(rewrittenChars - warm.share * warm.chars).toBeLessThan(originalChars)
    for (const output of outputs) {
      expect(JSON.stringify(body)).toContain(JSON.stringify(output).slice(1, -1))
      expect(JSON.stringify(summary)).not.toContain(JSON.stringify(output).slice(1, -1))
    }
    if (plan.action === 'rewrite') expect(plan.diff.at(-1)).toMatch(/in place of its transcript \(\d+ chars\)/)
  })

  it('replays the held history in place of pi’s transcript (Anthropic), inside the last tool-result message', () => {
    const conversation = piConversation()
    const summary = piSummary()
    const plan = new WarmSummaryPlanner().plan(
      inbound('anthropic-messages', summary, T0 + 40_000),
      summary,
      holding(remembered('anthropic-messages', conversation, T0)),
    )
    const body = rewrittenBody(plan)
    expect(plan.action === 'rewrite' && plan.recognition.agent).toBe('pi')
    expect(prefixShare('anthropic-messages', conversation, body).share).toBeGreaterThanOrEqual(0.98)
    expect(prefixShare('anthropic-messages', conversation, summary).share).toBeLessThan(0.98)
    const messages = body.messages as { content: Record<string, unknown>[] }[]
    expect(messages).toHaveLength((conversation.messages as unknown[]).length)
    const last = (messages.at(-1) as { content: Record<string, unknown>[] }).content
    expect(last.map((block) => block.type)).toEqual(['tool_result', 'text'])
    expect(last[1]?.text).toContain(PI_INSTRUCTION)
    expect(body.system).toBe(conversation.system)
  })

  it('with a price, a summary request whose cost cannot be weighed (a body of the wrong shape) is sent as written, saying why', () => {
    const conversation = opencodeConversation()
    const summary = { ...opencodeSummary(), model: 5 }
    const memory = holding(remembered('openai-chat', conversation, T0))
    const plan = new WarmSummaryPlanner({ cacheRead: 0.1 }).plan(
      inbound('openai-chat', summary, T0 + 40_000),
      summary,
      memory,
    )
    expect(plan).toMatchObject({ action: 'forward', summary: { agent: 'opencode' } })
    expect(plan.action === 'forward' && plan.reason).toMatch(
      /^the replay's cost could not be weighed \(.*model.*\): sent as written$/,
    )
  })

  it('passes the transcript through when the proxy does not hold the history', () => {
    const summary = piSummary()
    const plan = new WarmSummaryPlanner().plan(inbound('anthropic-messages', summary, T0), summary, holding(undefined))
    expect(plan).toMatchObject({
      action: 'forward',
      reason: 'no remembered conversation request: the proxy does not hold the history it transcribes',
      summary: { agent: 'pi' },
    })
  })

  it('passes the transcript through when the held request is another conversation', () => {
    const other = {
      ...opencodeConversation(),
      messages: [{ role: 'user', content: 'Translate this README into French.' }],
    }
    const summary = opencodeSummary()
    const plan = new WarmSummaryPlanner().plan(
      inbound('openai-chat', summary, T0 + 1),
      summary,
      holding(remembered('openai-chat', other, T0)),
    )
    expect(plan.action === 'forward' && plan.reason).toMatch(
      /^its transcript does not transcribe the remembered conversation request/,
    )
    expect(plan.action === 'forward' && plan.summary?.agent).toBe('opencode')
  })
})
