import { afterEach, describe, expect, it } from 'vitest'
import { NamedEvent, RecordingServer } from '../src/index.ts'

let server: RecordingServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('RecordingServer', () => {
  it('records the raw body and answers named and bare SSE events, with [DONE] only when asked', async () => {
    server = await RecordingServer.start((_request, index) =>
      index === 0 ? { sse: [new NamedEvent('response.created', { a: 1 }), { b: 2 }], done: false } : { sse: ['raw'] },
    )
    const first = await fetch(`${server.origin}/v1/responses`, { method: 'POST', body: '{"z":1, "a":2}' })
    expect(first.headers.get('content-type')).toBe('text/event-stream')
    expect(await first.text()).toBe('event: response.created\ndata: {"a":1}\n\ndata: {"b":2}\n\n')
    const second = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST', body: 'not json' })
    expect(await second.text()).toBe('data: raw\n\ndata: [DONE]\n\n')
    expect(server.requests.map((request) => [request.url, request.body, request.json])).toEqual([
      ['/v1/responses', '{"z":1, "a":2}', { z: 1, a: 2 }],
      ['/v1/chat/completions', 'not json', undefined],
    ])
  })
})
