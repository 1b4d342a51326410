import { expect, it } from 'vitest'
import type { ObserverMemory } from '../src/index.ts'
import { ProxyObserver } from '../src/index.ts'
import { exchangeOf, usage } from './support/observe-capture.ts'
import { settle } from './support/observe-settle.ts'

/** Turn `turn` of session `session`: a Chat Completions body whose history grows by one tool call a turn. */
function body(session: number, turn: number): Buffer {
  const messages: unknown[] = [
    { role: 'system', content: 'You are Tinker, a careful coding assistant.' },
    { role: 'user', content: `Task ${session}: make the kettle timer fire on time.` },
  ]
  for (let step = 0; step < turn; step++)
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${step}`, type: 'function', function: { name: 'read_file', arguments: `{"n":${step}}` } }],
      },
      { role: 'tool', tool_call_id: `c${step}`, content: `file ${session}/${step}: ${'x'.repeat(400)}` },
    )
  const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: {} } } }]
  return Buffer.from(JSON.stringify({ model: 'gpt-test', messages, tools }))
}

it('holds as much after 10,000 requests as after 1,000: it follows the live sessions (LRU), not the requests seen', async () => {
  const observer = new ProxyObserver({ maxSessions: 50 })
  const checkpoints: ObserverMemory[] = []
  let id = 0
  // 1,000 sessions of 10 requests each, one after the other, as agents come and go.
  for (let session = 0; session < 1000; session++) {
    for (let turn = 0; turn < 10; turn++) {
      id++
      observer.observe(
        exchangeOf(
          {
            method: 'POST',
            url: '/v1/chat/completions',
            rawHeaders: [],
            headers: { 'x-session-id': `s${session}`, 'content-type': 'application/json' },
            body: body(session, turn),
          },
          { id, at: 1_000_000 + id * 100, usage: usage(1000 + turn * 120, 900 + turn * 100) },
        ),
      )
    }
    if ((session + 1) % 100 === 0) {
      await settle(observer)
      checkpoints.push(observer.memory())
    }
  }
  await observer.close()
  const [atThousand, ...later] = checkpoints as [ObserverMemory, ...ObserverMemory[]]
  expect(atThousand).toMatchObject({ sessions: 50, rememberedBodies: 50, queued: 0 })
  for (const memory of later) expect(memory).toEqual(atThousand)
  // Each remembered request: its 21 distinct messages (the system prompt and tool shared by all).
  expect(atThousand.internedTexts).toBeLessThanOrEqual(50 * 21 + 2)
  expect(observer.snapshot().totals.requests).toBe(10_000)
})
