import type { Server } from 'node:http'
import { request as httpRequest } from 'node:http'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import * as answers from './forward-answers.ts'
import { answerOf } from './forward-answers.ts'
import type { ProxyHarness } from './forward-harness.ts'
import { startHarness } from './forward-harness.ts'
import { jsonHeaders, SSE_HEADERS } from './forward-scripted-upstream.ts'

/**
 * A raw node:http request: headers exactly as given (case, order, repeats; node adds none to a
 * header list, so `Host` comes first), and the answer's raw bytes.
 */
function rawCall(
  url: string,
  method: string,
  headers: string[],
  body?: Buffer,
): Promise<{ status: number; rawHeaders: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers: ['Host', new URL(url).host, ...headers] }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, rawHeaders: response.rawHeaders, body: Buffer.concat(chunks) }),
      )
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** A promise and the function that resolves it. */
function gate(): { released: Promise<void>; release: () => void } {
  let release: (() => void) | undefined
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  return { released, release: () => release?.() }
}

describe('the HTTP path', () => {
  let harness: ProxyHarness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })

  it('passes server-sent events on one by one: the upstream sends its second event only after the client saw the first', async () => {
    const order: string[] = []
    const { released, release } = gate()
    harness = await startHarness(() => ({
      status: 200,
      headers: SSE_HEADERS,
      parts: answers.anthropicStream.parts,
      before: async (index) => {
        if (index !== 1) return
        // A safety net so a buffering proxy fails the ordering assertion instead of hanging the test.
        const fallback = setTimeout(() => {
          order.push('upstream gave up waiting')
          release()
        }, 5000)
        await released
        clearTimeout(fallback)
        order.push('upstream sends event 2')
      },
    }))
    const response = await fetch(`${harness.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
      body: '{"model":"claude-test","max_tokens":8,"stream":true,"messages":[]}',
    })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    while (!text.includes('content_block_start')) {
      const { value, done } = await reader.read()
      if (done) break
      text += Buffer.from(value).toString('utf8')
      if (text.includes('message_start') && !order.includes('client saw event 1')) {
        order.push('client saw event 1')
        release()
      }
    }
    order.push('client saw event 2')
    for (;;) if ((await reader.read()).done) break
    expect(order).toEqual(['client saw event 1', 'upstream sends event 2', 'client saw event 2'])
    await harness.observed(1)
    expect(harness.exchanges[0]?.answer.usage).toEqual(answers.anthropicStream.usage)
  })

  for (const [encoding, compress] of [
    ['gzip', gzipSync],
    ['br', brotliCompressSync],
  ] as const) {
    it(`passes a ${encoding} answer on compressed, byte for byte, and reads a decompressed copy`, async () => {
      const plain = answers.chatJson.parts.join('')
      const compressed = compress(Buffer.from(plain))
      harness = await startHarness(() => ({
        status: 200,
        headers: [
          'Content-Type',
          'application/json',
          'Content-Encoding',
          encoding,
          'Content-Length',
          String(compressed.length),
        ],
        parts: [compressed.subarray(0, 10), compressed.subarray(10)],
      }))
      const answer = await rawCall(
        `${harness.url}/v1/chat/completions`,
        'POST',
        ['Content-Type', 'application/json', 'Accept-Encoding', `${encoding}`],
        Buffer.from('{"model":"gpt-test","messages":[]}'),
      )
      expect(answer.body.equals(compressed)).toBe(true)
      expect(answer.rawHeaders).toContain(encoding)
      await harness.observed(1)
      expect(harness.exchanges[0]?.answer.usage).toEqual(answers.chatJson.usage)
      expect(harness.exchanges[0]?.answer.unreadable).toBeUndefined()
    })
  }

  it('keeps header names, case, order, repeats and anthropic-version / anthropic-beta; drops hop-by-hop ones', async () => {
    harness = await startHarness(() => ({ status: 200, headers: jsonHeaders('{}'), parts: ['{}'] }))
    const body = Buffer.from('{"model":"claude-test","max_tokens":8,"messages":[]}')
    const sent = [
      'X-Api-Key',
      'k',
      'anthropic-version',
      '2023-06-01',
      'Anthropic-Beta',
      'prompt-caching-2024-07-31,cache-diagnosis-2026-04-07',
      'X-Custom',
      'one',
      'X-Custom',
      'two',
      'Connection',
      'keep-alive, X-Hop',
      'X-Hop',
      'only this hop',
      'Keep-Alive',
      'timeout=5',
      'Proxy-Authorization',
      'Basic abc',
      'TE',
      'trailers',
      'Content-Type',
      'application/json',
      'Content-Length',
      String(body.length),
    ]
    await rawCall(`${harness.url}/v1/messages?beta=true`, 'POST', sent, body)
    const got = harness.upstream.requests[0]
    expect(got?.url).toBe('/v1/messages?beta=true')
    expect(got?.body.equals(body)).toBe(true)
    const names = (got?.rawHeaders ?? []).filter((_, index) => index % 2 === 0)
    expect(names.filter((name) => !/^(host|connection)$/i.test(name))).toEqual([
      'X-Api-Key',
      'anthropic-version',
      'Anthropic-Beta',
      'X-Custom',
      'X-Custom',
      'Content-Type',
      'Content-Length',
    ])
    expect(got?.rawHeaders).toContain('prompt-caching-2024-07-31,cache-diagnosis-2026-04-07')
    // Host kept where the client had it (first), with the upstream's value.
    expect(got?.rawHeaders.slice(0, 2)).toEqual(['Host', new URL(harness.upstream.url).host])
  })

  it('forwards an unknown path unread, and a chunked body with a content-length', async () => {
    const refusal = '{"error":"nope"}'
    harness = await startHarness(() => ({ status: 404, headers: jsonHeaders(refusal), parts: [refusal] }))
    const answer = await rawCall(
      `${harness.url}/v1/files/abc/content`,
      'PUT',
      ['Transfer-Encoding', 'chunked'],
      Buffer.from('x'.repeat(10)),
    )
    expect(answer.status).toBe(404)
    expect(answer.body.toString()).toBe(refusal)
    const got = harness.upstream.requests[0]
    expect(got?.method).toBe('PUT')
    expect(got?.body.toString()).toBe('x'.repeat(10))
    expect(got?.rawHeaders).toEqual([
      'Host',
      new URL(harness.upstream.url).host,
      'content-length',
      '10',
      'Connection',
      'keep-alive',
    ])
    await harness.observed(1)
    expect(harness.exchanges[0]?.request.route).toEqual({ api: undefined, kind: 'other', streamByPath: false })
    expect(harness.exchanges[0]?.answer.content).toBe('unknown')
  })

  it('appends the request path to the upstream path prefix', async () => {
    harness = await startHarness(() => ({ status: 200, headers: jsonHeaders('{}'), parts: ['{}'] }))
    // A second proxy whose upstream carries a path prefix, in front of the first harness's upstream.
    const prefixed = await startHarness(() => ({ status: 500, headers: [], parts: [] }), {
      upstream: `${harness.upstream.url}/api/openai/`,
    })
    try {
      const answer = await fetch(`${prefixed.url}/v1/models?limit=2`)
      expect(answer.status).toBe(200)
      expect(harness.upstream.requests[0]?.url).toBe('/api/openai/v1/models?limit=2')
      await prefixed.observed(1)
      expect(prefixed.exchanges[0]?.request.route.kind).toBe('models')
    } finally {
      await prefixed.close()
    }
  })

  it('streams 50 concurrent answers at once: every client sees its first event before any upstream sends a second', async () => {
    const clients = 50
    const { released, release } = gate()
    let firstSeen = 0
    harness = await startHarness(() => ({
      ...answerOf(answers.chatStream),
      before: async (index) => {
        if (index === 1) await released
      },
    }))
    const url = `${harness.url}/v1/chat/completions`
    const runs = Array.from({ length: clients }, async () => {
      const response = await fetch(url, { method: 'POST', body: '{"stream":true}' })
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      let text = ''
      let counted = false
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        text += Buffer.from(value).toString('utf8')
        if (!counted && text.includes('chatcmpl-1')) {
          counted = true
          if (++firstSeen === clients) release()
        }
      }
      return text
    })
    const texts = await Promise.all(runs)
    expect(texts).toEqual(Array.from({ length: clients }, () => answers.chatStream.parts.join('')))
    await harness.observed(clients)
    expect(harness.exchanges.every((exchange) => exchange.answer.usage?.inputTokens === 1200)).toBe(true)
  })

  it('sends a request again, once, when a pooled upstream connection turns out closed before any answer', async () => {
    const perSocket = new Map<unknown, number>()
    harness = await startHarness(() => answerOf(answers.chatJson))
    // The second request on a kept-alive connection finds it closed, as when the upstream's idle timeout won the race.
    const upstream = harness.upstream as unknown as { server: Server }
    upstream.server.prependListener('request', (request) => {
      const seen = (perSocket.get(request.socket) ?? 0) + 1
      perSocket.set(request.socket, seen)
      if (seen === 2) request.socket.destroy()
    })
    const first = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: '{"n":1}' })
    expect(first.status).toBe(200)
    await first.text()
    const second = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: '{"n":2}' })
    expect(second.status).toBe(200)
    expect(await second.text()).toBe(answers.chatJson.parts.join(''))
    // On the wire twice (the closing connection took its bytes in), answered on the fresh connection.
    expect(harness.upstream.requests.map((got) => got.body.toString())).toEqual(['{"n":1}', '{"n":2}', '{"n":2}'])
    expect(perSocket.size).toBe(2)
  })
})
