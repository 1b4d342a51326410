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

/** codex-rs core/templates/compact/prompt.md, verbatim. */
const CODEX_COMPACT_PROMPT = `You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.

Include:
- Goal / user objective
- Current progress and key decisions made
- Important context, constraints, or user preferences
- What remains to be done (clear next steps)
- Any critical data, examples, or references needed to continue

Be concise, structured, and focused on helping the next LLM seamlessly continue the work.
`

const T0 = Date.parse('2026-12-04T12:00:00Z')

function userItem(text: string) {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] }
}

/** A Codex conversation request: reasoning items with encrypted content, call pairs, prompt_cache_key. */
function codexConversation(): Record<string, unknown> {
  const input: unknown[] = [
    userItem('<environment_context>\n  <cwd>/home/dev/app</cwd>\n  <shell>bash</shell>\n</environment_context>'),
    userItem('Add input validation to src/parse.ts and make the tests pass.'),
  ]
  for (let step = 0; step < 6; step++) {
    input.push(
      { type: 'reasoning', summary: [], content: null, encrypted_content: `gAAAAB${'x'.repeat(400)}${step}` },
      {
        type: 'function_call',
        name: 'shell',
        arguments: JSON.stringify({ command: ['cat', `src/file${step}.ts`] }),
        call_id: `call_${step}`,
      },
      { type: 'function_call_output', call_id: `call_${step}`, output: sourceText(`file${step}`, 60) },
    )
  }
  return {
    model: 'gpt-5.5-codex',
    instructions: agentSystemPrompt('Codex'),
    input,
    tools: TOOL_NAMES.map((name) => ({
      type: 'function',
      name,
      description: `The ${name} tool.`,
      strict: false,
      parameters: parameters('path', 'command'),
    })),
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '019a7c2e-5b1d-7f00-9c4e-2a1b3c4d5e6f',
  }
}

/** Codex's compact request: the same input, the answer since, its prompt; `tools: []`, no parallel calls. */
function codexSummary(conversation: Record<string, unknown>): Record<string, unknown> {
  const answer = [
    { type: 'reasoning', summary: [], content: null, encrypted_content: `gAAAAB${'y'.repeat(300)}` },
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Validation added; 12 tests pass.' }],
    },
  ]
  return {
    ...conversation,
    input: [...(conversation.input as unknown[]), ...answer, userItem(CODEX_COMPACT_PROMPT)],
    tools: [],
    parallel_tool_calls: false,
  }
}

describe('warm summaries: Codex (Responses, toolless shape)', () => {
  it('rewrites the compact request into the conversation request whole plus its prompt', () => {
    const conversation = codexConversation()
    const summary = codexSummary(conversation)
    const memory = new HeldMemory([remembered('openai-responses', conversation, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('openai-responses', summary, T0 + 30_000), summary, memory)
    const body = rewrittenBody(plan)
    expect(plan.action === 'rewrite' && plan.recognition.agent).toBe('codex')
    expect(plan.action === 'rewrite' && plan.recognition.confidence).toBeGreaterThanOrEqual(0.8)
    expect(prefixShare('openai-responses', conversation, body).share).toBeGreaterThanOrEqual(0.98)
    expect(prefixShare('openai-responses', conversation, summary).share).toBeLessThan(0.98)
    // Tools, parallel calls, reasoning items, call pairs, prompt_cache_key and store as the conversation sent them.
    expect(body.tools).toEqual(conversation.tools)
    expect(body.parallel_tool_calls).toBe(true)
    expect(body.prompt_cache_key).toBe(conversation.prompt_cache_key)
    expect(body.store).toBe(false)
    expect(body.stream).toBe(true)
    const input = body.input as Record<string, unknown>[]
    const before = conversation.input as unknown[]
    expect(input.slice(0, before.length)).toEqual(before)
    // The answer since is kept, then one user message: the prompt wrapped, with the guard.
    expect(input.slice(before.length, -1)).toEqual((summary.input as unknown[]).slice(before.length, -1))
    const last = input.at(-1) as { role: string; content: { text: string }[] }
    expect(last.role).toBe('user')
    expect(last.content[0]?.text).toContain(CODEX_COMPACT_PROMPT.trim())
    expect(last.content[0]?.text).toContain(TEXT_ONLY_GUARD)
    const outputs = new Set(input.filter((item) => item.type === 'function_call_output').map((item) => item.call_id))
    const calls = new Set(input.filter((item) => item.type === 'function_call').map((item) => item.call_id))
    expect(outputs).toEqual(calls)
    expect(
      input.filter((item) => item.type === 'reasoning').every((item) => typeof item.encrypted_content === 'string'),
    ).toBe(true)
    // The JSON text of the conversation request is the rewrite's, up to the end of its input list.
    const text = JSON.stringify(conversation)
    const cut = text.indexOf('"tools"') - 2
    expect(plan.action === 'rewrite' && plan.body.toString().slice(0, cut)).toBe(text.slice(0, cut))
  })

  it('says what changed, one line per change', () => {
    const conversation = codexConversation()
    const summary = codexSummary(conversation)
    const memory = new HeldMemory([remembered('openai-responses', conversation, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('openai-responses', summary, T0 + 1_000), summary, memory)
    if (plan.action !== 'rewrite') throw new Error(plan.reason)
    expect(plan.diff).toContain(`tools: restored ${TOOL_NAMES.length} tools`)
    expect(plan.diff).toContain('parallel_tool_calls: false → true')
    expect(plan.diff.at(-1)).toMatch(
      /^input: replayed the conversation's 20 in place of the summary request's 20, kept 2 more/,
    )
  })

  it('passes a compact request through when the conversation request is older than the cache TTL', () => {
    const conversation = codexConversation()
    const summary = codexSummary(conversation)
    const memory = new HeldMemory([remembered('openai-responses', conversation, T0)])
    const plan = new WarmSummaryPlanner().plan(inbound('openai-responses', summary, T0 + 6 * 60_000), summary, memory)
    expect(plan.action).toBe('forward')
    expect(plan.action === 'forward' && plan.reason).toMatch(/360 s old, past the cache TTL of 300 s/)
    expect(plan.action === 'forward' && plan.summary?.agent).toBe('codex')
  })

  it('forwards a conversation turn without a reason and without asking the memory', () => {
    const conversation = codexConversation()
    const memory = new HeldMemory([])
    const plan = new WarmSummaryPlanner().plan(inbound('openai-responses', conversation, T0), conversation, memory)
    expect(plan).toEqual({ action: 'forward' })
    expect(memory.calls).toBe(0)
  })
})
