import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { Exchange } from '../src/index.ts'
import { redactHeaders, WarmfoldProxy } from '../src/index.ts'
import * as answers from './forward-answers.ts'
import { answerOf } from './forward-answers.ts'
import type { ProxyHarness } from './forward-harness.ts'
import { startHarness } from './forward-harness.ts'
import { jsonHeaders, sse, SSE_HEADERS } from './forward-scripted-upstream.ts'

const KEY = 'sk-live-do-not-log-9f8e7d'
const TOKEN = 'proxy-token-a1b2c3'
const CHAT_BODY = '{"model":"gpt-test","messages":[{"role":"user","content":"Hi"}]}'

/** The exchange as anything but the forwarded request itself: what a log or page could show. */
function shownPart(exchange: Exchange): string {
  const { request, sent: _sent, ...rest } = exchange
  const { rawHeaders: _raw, body: _body, ...shown } = request
  return JSON.stringify({ ...rest, request: { ...shown, headers: redactHeaders(request.headers) } })
}

describe('the proxy config', () => {
  it('refuses a host that is not loopback without a token, naming host and token', async () => {
    expect(() => WarmfoldProxy.Config({ upstream: 'http://127.0.0.1:1', host: '0.0.0.0' })).toThrow(
      'WarmfoldProxy config: host "0.0.0.0" is not loopback, so token is required',
    )
    const test = await createTestContext()
    try {
      test.ctx.plugin(WarmfoldProxy, { upstream: 'http://127.0.0.1:1', host: '0.0.0.0', port: 0 })
      await test.ctx.lifecycle.flush()
      expect(String(test.errors[0])).toMatch(/host "0\.0\.0\.0" is not loopback, so token is required/)
      expect(test.ctx.get('proxy')).toBeUndefined()
    } finally {
      await test.dispose()
    }
    expect(() => WarmfoldProxy.Config({ upstream: 'http://127.0.0.1:1', host: '0.0.0.0', token: TOKEN })).not.toThrow()
    expect(() => WarmfoldProxy.Config({ upstream: 'http://127.0.0.1:1', host: '::1' })).not.toThrow()
  })

  it('names a bad upstream, a missing one, and a bad price profile', () => {
    expect(() => WarmfoldProxy.Config({ upstream: 'api.openai.com' })).toThrow(
      'WarmfoldProxy config: upstream must be an http(s) URL, got "api.openai.com"',
    )
    expect(() => WarmfoldProxy.Config({ upstream: 'ftp://example.com' })).toThrow('(protocol ftp:)')
    expect(() => WarmfoldProxy.Config({ upstream: `https://user:${KEY}@api.example.com` })).toThrow(
      'WarmfoldProxy config: upstream must not carry credentials (the agent sends its own key), got ' +
        '"https://[credentials]@api.example.com"',
    )
    expect(() => WarmfoldProxy.Config({ upstream: `ftp://user:${KEY}@x` })).toThrow('"ftp://[credentials]@x"')
    expect(() => WarmfoldProxy.Config({})).toThrow('WarmfoldProxy config: $.upstream missing required value')
    expect(() => WarmfoldProxy.Config({ upstream: 'http://x', prices: { name: 'p', cacheRead: 0.1 } })).toThrow(
      'WarmfoldProxy config prices',
    )
    expect(() => WarmfoldProxy.Config({ upstream: 'http://x', maxBodyBytes: 0 })).toThrow('maxBodyBytes')
    expect(WarmfoldProxy.Config({ upstream: 'https://api.anthropic.com' })).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      warmSummaries: 'off',
      maxBodyBytes: 32 * 1024 * 1024,
      noBodies: false,
      cacheTtlMs: 300_000,
      maxSessions: 1000,
    })
  })
})

describe('the proxy token and credentials', () => {
  let harness: ProxyHarness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })

  it('answers 401 without the token or with a wrong one, and makes no upstream request', async () => {
    harness = await startHarness(() => answerOf(answers.chatJson), { token: TOKEN })
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }
    const missing = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', headers, body: CHAT_BODY })
    expect(missing.status).toBe(401)
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(
      /needs its token: send the header x-warmfold-proxy-token: <token>, or put \/_t\/<token> before the path/,
    )
    const wrong = await fetch(`${harness.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'x-warmfold-proxy-token': 'guess' },
      body: CHAT_BODY,
    })
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toMatch(/the proxy token sent is wrong/)
    const wrongPath = await fetch(`${harness.url}/_t/guess/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: CHAT_BODY,
    })
    expect(wrongPath.status).toBe(401)
    expect((await fetch(`${harness.url}/_warmfold/`)).status).toBe(401)
    expect((await fetch(`${harness.url}/_warmfold/state.json`)).status).toBe(401)
    expect(harness.upstream.requests).toHaveLength(0)
    expect(harness.exchanges).toHaveLength(0)
  })

  it('takes the token as a header or a /_t/ path prefix, forwards neither, and shows credentials to no observer', async () => {
    harness = await startHarness(() => answerOf(answers.chatJson), { token: TOKEN })
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }
    const byHeader = await fetch(`${harness.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'X-Warmfold-Proxy-Token': TOKEN },
      body: CHAT_BODY,
    })
    expect(byHeader.status).toBe(200)
    const byPath = await fetch(`${harness.url}/_t/${TOKEN}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: CHAT_BODY,
    })
    expect(byPath.status).toBe(200)
    const gemini = await fetch(`${harness.url}/_t/${TOKEN}/v1beta/models/g:generateContent?key=${KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"contents":[]}',
    })
    expect(gemini.status).toBe(200)
    const [first, second, third] = harness.upstream.requests
    expect(first?.url).toBe('/v1/chat/completions')
    expect(second?.url).toBe('/v1/chat/completions')
    expect(third?.url).toBe(`/v1beta/models/g:generateContent?key=${KEY}`)
    for (const got of harness.upstream.requests) expect(got.rawHeaders.join('\n')).not.toContain(TOKEN)
    expect(first?.rawHeaders).toContain(`Bearer ${KEY}`)

    await harness.observed(3)
    for (const exchange of harness.exchanges) {
      expect(exchange.request.url).not.toContain(TOKEN)
      expect(shownPart(exchange)).not.toContain(TOKEN)
      expect(shownPart(exchange)).not.toContain(`Bearer ${KEY}`)
    }
    const page = await fetch(`${harness.url}/_t/${TOKEN}/_warmfold/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const state = await fetch(`${harness.url}/_warmfold/state.json`, { headers: { 'x-warmfold-proxy-token': TOKEN } })
    expect(await state.json()).toEqual({ observer: 'none' })
  })
})

describe('bad bodies and broken connections', () => {
  let harness: ProxyHarness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })

  it('answers 413 over maxBodyBytes, naming the limit and the size, declared or streamed, and keeps serving', async () => {
    harness = await startHarness(() => answerOf(answers.chatJson), { maxBodyBytes: 1000 })
    const declared = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: 'x'.repeat(5000) })
    expect(declared.status).toBe(413)
    expect(await declared.json()).toMatchObject({
      error: {
        message: expect.stringContaining(
          'over the limit of 1000 bytes (config maxBodyBytes): its content-length is 5000 bytes',
        ),
        limit: 1000,
        received: 5000,
      },
    })
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let index = 0; index < 5; index++) controller.enqueue(new Uint8Array(600))
        controller.close()
      },
    })
    const streamed = await fetch(`${harness.url}/v1/chat/completions`, {
      method: 'POST',
      body: chunks,
      duplex: 'half',
    } as RequestInit)
    expect(streamed.status).toBe(413)
    expect(await streamed.text()).toContain('over the limit of 1000 bytes')
    expect(harness.upstream.requests).toHaveLength(0)
    const fine = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: CHAT_BODY })
    expect(fine.status).toBe(200)
  })

  it('survives a client that aborts mid-body, and forwards nothing for it', async () => {
    harness = await startHarness(() => answerOf(answers.chatJson))
    const { port } = new URL(harness.url)
    await new Promise<void>((resolve) => {
      const request = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-length': '10000' },
      })
      request.on('error', () => resolve())
      request.write('{"model":"gpt-test","mess', () => setTimeout(() => request.destroy(), 20))
      request.on('close', () => resolve())
    })
    const fine = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: CHAT_BODY })
    expect(fine.status).toBe(200)
    expect(harness.upstream.requests.map((got) => got.body.toString())).toEqual([CHAT_BODY])
  })

  it("forwards a malformed JSON body unchanged in 'on' mode, and passes the upstream's own 400 on", async () => {
    const refusal = '{"error":{"message":"We could not parse the JSON body of your request."}}'
    harness = await startHarness(() => ({ status: 400, headers: jsonHeaders(refusal), parts: [refusal] }), {
      warmSummaries: 'on',
    })
    const malformed = '{"model":"gpt-test","messages":[{"role":"user","content":"Hi"}'
    const answer = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: malformed })
    expect(answer.status).toBe(400)
    expect(await answer.text()).toBe(refusal)
    expect(harness.upstream.requests.map((got) => got.body.toString())).toEqual([malformed])
    await harness.observed(1)
    expect(harness.exchanges[0]?.plan).toMatchObject({ action: 'forward', reason: expect.stringContaining('not JSON') })
    expect(harness.exchanges[0]?.answer.status).toBe(400)
  })

  it('forwards a WebSocket upgrade (Codex’s optional transport) as a plain request without it, so the agent gets the upstream’s refusal and falls back to HTTP', async () => {
    const refusal = '{"error":{"message":"WebSocket upgrades are not served here."}}'
    harness = await startHarness(() => ({ status: 426, headers: jsonHeaders(refusal), parts: [refusal] }))
    const { port } = new URL(harness.url)
    const answer = await new Promise<{ status: number; body: string; upgraded: boolean }>((resolve, reject) => {
      const request = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'GET',
        path: '/v1/responses',
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      })
      request.on('upgrade', (_response, socket) => {
        socket.destroy()
        resolve({ status: 101, body: '', upgraded: true })
      })
      request.on('response', (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString(), upgraded: false }),
        )
      })
      request.on('error', reject)
      request.end()
    })
    expect(answer).toEqual({ status: 426, body: refusal, upgraded: false })
    const [forwarded] = harness.upstream.requests
    expect(forwarded?.method).toBe('GET')
    const names = forwarded!.rawHeaders.filter((_, index) => index % 2 === 0).map((name) => name.toLowerCase())
    expect(names).not.toContain('upgrade')
    expect(names).toContain('sec-websocket-key')
  })

  it('answers 502 naming the upstream and the cause when the upstream cannot be reached', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    harness = await startHarness(() => answerOf(answers.chatJson), { upstream: `http://127.0.0.1:${port}/base` })
    const answer = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: CHAT_BODY })
    expect(answer.status).toBe(502)
    const message = ((await answer.json()) as { error: { message: string } }).error.message
    expect(message).toContain(`the upstream http://127.0.0.1:${port}/base could not be reached`)
    expect(message).toContain('ECONNREFUSED')
    await harness.observed(1)
    expect(harness.exchanges[0]?.answer).toMatchObject({
      status: 502,
      unreadable: expect.stringContaining('ECONNREFUSED'),
    })
  })

  it('aborts the upstream request when the client goes away mid-answer', async () => {
    harness = await startHarness(() => ({
      status: 200,
      headers: SSE_HEADERS,
      parts: [sse({ type: 'response.created', response: { id: 'resp_1' } }), sse({ type: 'never sent' })],
      before: () => new Promise<void>(() => undefined),
    }))
    const abort = new AbortController()
    const answer = await fetch(`${harness.url}/v1/responses`, {
      method: 'POST',
      body: '{"stream":true}',
      signal: abort.signal,
    })
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    abort.abort()
    await harness.upstream.closed[0]
    await harness.observed(1)
    expect(harness.exchanges[0]?.answer.unreadable).toBe('the answer was cut: the client went away')
    expect(harness.exchanges[0]?.answer.responseId).toBe('resp_1')
  })
})
