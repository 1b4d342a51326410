import { bench, describe } from 'vitest'
import type { Exchange } from '../src/index.ts'
import { ProxyObserver } from '../src/index.ts'

/**
 * The observer's analysis, per request, off the forward's path: one Chat Completions session whose
 * every request extends the one before by a tool call and its result, at about 32k and 512k
 * characters of prompt (≈ 8k and 128k tokens). The forward pays `observe()` alone (a queue push);
 * the analysis timed here runs after it, on the same event loop (JSON.parse, canonical segments,
 * SHA-256 of the body, the comparison), once per request.
 */
function session(chars: number, requests: number): Exchange[] {
  const result = 'x'.repeat(Math.round(chars / (2 * requests)))
  const base = [
    { role: 'system', content: `You are a careful coding agent. ${'Follow the conventions. '.repeat(chars / 50)}` },
    { role: 'user', content: 'Fix the kettle timer.' },
  ]
  const exchanges: Exchange[] = []
  const messages: unknown[] = [...base]
  for (let id = 1; id <= requests; id++) {
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${id}`, type: 'function', function: { name: 'read', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: `c${id}`, content: `${id} ${result}` },
    )
    const body = Buffer.from(JSON.stringify({ model: 'gpt-test', messages }))
    exchanges.push({
      request: {
        id,
        receivedAt: 1_000_000 + id * 1000,
        method: 'POST',
        url: '/v1/chat/completions',
        route: { api: 'openai-chat', kind: 'generate', streamByPath: false },
        rawHeaders: [],
        headers: { 'x-session-id': 'bench' },
        body,
        stream: false,
      },
      sent: body,
      answer: {
        status: 200,
        streamed: false,
        content: 'text',
        totalMs: 1,
        usage: {
          inputTokens: body.length / 4,
          cacheReadTokens: body.length / 5,
          cacheWriteTokens: 0,
          outputTokens: 10,
        },
      },
    })
  }
  return exchanges
}

for (const [label, chars] of [
  ['8k tokens', 32_000],
  ['128k tokens', 512_000],
] as const) {
  const exchanges = session(chars, 20)
  describe(`the observer over 20 requests growing to ${label}`, () => {
    bench(`analyse 20 requests (${label} at the end)`, async () => {
      const observer = new ProxyObserver()
      for (const exchange of exchanges) observer.observe(exchange)
      await observer.close()
    })
  })
}
