import { bench, describe } from 'vitest'
import type { InboundRequest, RememberedRequest, RequestMemory } from '../src/index.ts'
import { WarmSummaryPlanner } from '../src/index.ts'

/**
 * What the warm room adds to a request's path, at 8k, 128k and 512k-token bodies (about 4
 * characters a token): a conversation turn (the planner reads the system and the last message
 * and forwards, without asking the memory) and a Qwen Code summary request it rewrites (the
 * memory's lookup is the observer's and is not counted here: it answers at once).
 */
const SIZES = [8_000, 128_000, 512_000]
const SUMMARIZER = 'You are the component that summarizes a conversation when its context window is about to overflow.'
const INSTRUCTION = 'First, reason in your <analysis> block. Then, produce the <state_snapshot> XML.'

function conversation(tokens: number): Record<string, unknown> {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent. '.repeat(400) },
    { role: 'user', content: 'Fix the failing test.' },
  ]
  const output = 'export const line = 1 // a line of a file the agent read\n'.repeat(70)
  for (let step = 0; JSON.stringify(messages).length < tokens * 4; step++)
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${step}`, type: 'function', function: { name: 'read_file', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: `c${step}`, content: output },
    )
  const tools = Array.from({ length: 12 }, (_, index) => ({
    type: 'function',
    function: { name: `tool_${index}`, parameters: { type: 'object' } },
  }))
  return { model: 'qwen3-coder-plus', messages, tools, stream: true }
}

function inbound(json: Record<string, unknown>): InboundRequest {
  const body = Buffer.from(JSON.stringify(json))
  return {
    id: 1,
    receivedAt: 1_000,
    method: 'POST',
    url: '/v1/chat/completions',
    route: { api: 'openai-chat', kind: 'generate', streamByPath: false },
    rawHeaders: [],
    headers: {},
    body,
    stream: true,
  }
}

for (const tokens of SIZES) {
  const turn = conversation(tokens)
  const held: RememberedRequest = { request: inbound(turn), api: 'openai-chat', json: turn, sessionKey: 's' }
  const memory: RequestMemory = { lastConversationFor: () => held }
  const history = (turn.messages as unknown[]).slice(1)
  const summary = {
    model: 'qwen3-coder-plus',
    messages: [{ role: 'system', content: SUMMARIZER }, ...history, { role: 'user', content: INSTRUCTION }],
    max_tokens: 20_000,
  }
  const next = { ...turn, messages: [...(turn.messages as unknown[]), { role: 'user', content: 'And the docs.' }] }
  const planner = new WarmSummaryPlanner()
  // With a price (`--price`) the planner also weighs the rewrite against the request as written.
  const priced = new WarmSummaryPlanner({ cacheRead: 0.1 })
  const turnRequest = inbound(next)
  const summaryRequest = inbound(summary)
  describe(`${tokens / 1000}k tokens`, () => {
    bench('conversation turn (forwarded)', () => {
      planner.plan(turnRequest, next, memory)
    })
    bench('summary request (rewritten)', () => {
      const plan = planner.plan(summaryRequest, summary, memory)
      if (plan.action !== 'rewrite') throw new Error(`not rewritten: ${plan.reason}`)
    })
    bench('summary request (rewritten, priced at a 0.1× cache read)', () => {
      const plan = priced.plan(summaryRequest, summary, memory)
      if (plan.action !== 'rewrite') throw new Error(`not rewritten: ${plan.reason}`)
    })
  })
}
