import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import type { WarmPlanner } from '../src/index.ts'
import * as answers from './forward-answers.ts'
import { answerOf } from './forward-answers.ts'
import type { ProxyHarness } from './forward-harness.ts'
import { startHarness } from './forward-harness.ts'
import type { ScriptedAnswer, UpstreamRecord } from './forward-scripted-upstream.ts'
import { jsonHeaders, sse, SSE_HEADERS } from './forward-scripted-upstream.ts'

const ORIGINAL =
  '{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"SUMMARIZE the conversation"}]}'

/** A test planner (the planner is not under test here): rewrites any request asking to SUMMARIZE. */
const planner: WarmPlanner = {
  plan(request, json) {
    if (!request.body.toString('utf8').includes('SUMMARIZE')) return { action: 'forward' }
    const recognition = { agent: 'test', confidence: 1, reason: 'the test planner rewrites every SUMMARIZE' }
    return {
      action: 'rewrite',
      body: Buffer.from(JSON.stringify({ ...json, tools: [{ type: 'function', function: { name: 'read' } }] })),
      recognition,
      replays: { request, api: 'openai-chat', json, sessionKey: 'test' },
      diff: ['tools: restored'],
    }
  },
}

const rewritten = (request: UpstreamRecord) => request.body.toString('utf8').includes('"tools"')

const toolCallStream: ScriptedAnswer = {
  status: 200,
  headers: SSE_HEADERS,
  parts: [
    sse({ id: 'chatcmpl-t', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }),
    sse({
      id: 'chatcmpl-t',
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } }],
          },
        },
      ],
    }),
    sse({ id: 'chatcmpl-t', choices: [{ index: 0, delta: { content: 'never reaches the client' } }] }),
    sse('[DONE]'),
  ],
}

async function post(harness: ProxyHarness, body = ORIGINAL): Promise<{ status: number; text: string }> {
  const answer = await fetch(`${harness.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  return { status: answer.status, text: await answer.text() }
}

describe("fail-open in 'on' mode", () => {
  let harness: ProxyHarness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })

  it('a rewrite answered 400: the original is sent once, and the client gets its answer', async () => {
    const refusal = '{"error":{"message":"tools is invalid"}}'
    harness = await startHarness(
      (request) =>
        rewritten(request)
          ? { status: 400, headers: jsonHeaders(refusal), parts: [refusal] }
          : answerOf(answers.chatStream),
      { warmSummaries: 'on' },
      planner,
    )
    const events: string[] = []
    harness.test.ctx.on('proxy/fail-open', (request, reason) => events.push(`${request.id}: ${reason}`))
    expect(await post(harness)).toEqual({ status: 200, text: answers.chatStream.parts.join('') })
    expect(events).toEqual(['1: the rewritten request was answered with status 400'])
    expect(harness.upstream.requests.map(rewritten)).toEqual([true, false])
    expect(harness.upstream.requests[1]?.body.toString()).toBe(ORIGINAL)
    await harness.observed(1)
    const [exchange] = harness.exchanges
    expect(exchange?.sent.toString()).toBe(ORIGINAL)
    expect(exchange?.failOpen?.reason).toBe('the rewritten request was answered with status 400')
    expect(exchange?.failOpen?.rewrittenAnswer.status).toBe(400)
    expect(exchange?.answer.usage).toEqual(answers.chatStream.usage)
  })

  for (const [shape, toolCall] of [
    ['streamed', toolCallStream],
    [
      'JSON',
      {
        status: 200,
        headers: jsonHeaders('x'),
        parts: [JSON.stringify({ id: 'c', choices: [{ message: { tool_calls: [{ id: 'call_1' }] } }] })],
      },
    ],
  ] as const) {
    it(`a rewrite answered with a ${shape} tool call: dropped, the original sent once, the client gets the original's answer`, async () => {
      const fixed = { ...toolCall, headers: shape === 'JSON' ? jsonHeaders(toolCall.parts.join('')) : toolCall.headers }
      harness = await startHarness(
        (request) => (rewritten(request) ? fixed : answerOf(answers.chatStream)),
        { warmSummaries: 'on' },
        planner,
      )
      const answer = await post(harness)
      expect(answer).toEqual({ status: 200, text: answers.chatStream.parts.join('') })
      expect(harness.upstream.requests.map(rewritten)).toEqual([true, false])
      await harness.observed(1)
      expect(harness.exchanges[0]?.failOpen?.reason).toBe('the rewritten request was answered with a tool call')
      expect(harness.exchanges[0]?.failOpen?.rewrittenAnswer.content).toBe('tool-call')
    })
  }

  it('a rewrite answered with text: the client gets it, streamed event by event; no second call', async () => {
    const order: string[] = []
    let release: (() => void) | undefined
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    harness = await startHarness(
      () => ({
        ...answerOf(answers.chatStream),
        before: async (index) => {
          if (index !== 2) return
          const fallback = setTimeout(() => {
            order.push('upstream gave up waiting')
            release?.()
          }, 5000)
          await released
          clearTimeout(fallback)
          order.push('upstream sends the rest')
        },
      }),
      { warmSummaries: 'on' },
      planner,
    )
    const response = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: ORIGINAL })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      text += Buffer.from(value).toString('utf8')
      if (text.includes('Hello') && !order.includes('client saw the first text')) {
        order.push('client saw the first text')
        release?.()
      }
    }
    order.push('client saw the end')
    expect(order).toEqual(['client saw the first text', 'upstream sends the rest', 'client saw the end'])
    expect(text).toBe(answers.chatStream.parts.join(''))
    expect(harness.upstream.requests.map(rewritten)).toEqual([true])
    await harness.observed(1)
    expect(harness.exchanges[0]?.sent.toString()).toContain('"tools"')
    expect(harness.exchanges[0]?.failOpen).toBeUndefined()
    expect(harness.exchanges[0]?.plan?.action).toBe('rewrite')
  })

  for (const [limit, config, reason] of [
    ['maxHoldMs', { maxHoldMs: 50 }, 'it showed no text within 50 ms'],
    ['maxHoldBytes', { maxHoldBytes: 8 }, 'it showed no text within the first 8 bytes'],
  ] as const)
    it(`a rewrite whose answer shows no text within ${limit} goes on as it came, before the upstream sends its text`, async () => {
      const order: string[] = []
      let go: (() => void) | undefined
      const upstreamGoesOn = new Promise<void>((resolve) => (go = resolve))
      harness = await startHarness(
        () => ({
          ...answerOf(answers.chatStream),
          // The text (part 1) waits until the client has what was held: an answer still thinking.
          before: async (index) => {
            if (index !== 1) return
            const fallback = setTimeout(() => {
              order.push('upstream gave up waiting')
              go?.()
            }, 5000)
            await upstreamGoesOn
            clearTimeout(fallback)
            order.push('upstream sends its text')
          },
        }),
        { warmSummaries: 'on', ...config },
        planner,
      )
      const released: string[] = []
      harness.test.ctx.on('proxy/hold-released', (request, why) => released.push(`${request.id}: ${why}`))
      const response = await fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: ORIGINAL })
      order.push('client got the answer')
      go?.()
      expect(await response.text()).toBe(answers.chatStream.parts.join(''))
      expect(order).toEqual(['client got the answer', 'upstream sends its text'])
      expect(released).toEqual([`1: ${reason}`])
      expect(harness.upstream.requests.map(rewritten)).toEqual([true])
      await harness.observed(1)
      expect(harness.exchanges[0]?.failOpen).toBeUndefined()
      expect(harness.exchanges[0]?.answer).toMatchObject({ content: 'text', holdReleased: reason })
    })

  it('never a second extra call: when the original fails too, the client gets its failure', async () => {
    const refusal = '{"error":{"message":"overloaded"}}'
    harness = await startHarness(
      () => ({ status: 529, headers: jsonHeaders(refusal), parts: [refusal] }),
      { warmSummaries: 'on' },
      planner,
    )
    expect(await post(harness)).toEqual({ status: 529, text: refusal })
    expect(harness.upstream.requests.map(rewritten)).toEqual([true, false])
  })

  it("'dry-run' plans the rewrite but forwards the original", async () => {
    harness = await startHarness(() => answerOf(answers.chatStream), { warmSummaries: 'dry-run' }, planner)
    expect((await post(harness)).status).toBe(200)
    expect(harness.upstream.requests.map((got) => got.body.toString())).toEqual([ORIGINAL])
    await harness.observed(1)
    expect(harness.exchanges[0]?.plan?.action).toBe('rewrite')
    expect(harness.exchanges[0]?.sent.toString()).toBe(ORIGINAL)
  })

  it("'off' never asks the planner", async () => {
    let asked = 0
    harness = await startHarness(
      () => answerOf(answers.chatStream),
      {},
      { plan: () => (asked++, { action: 'forward' }) },
    )
    expect((await post(harness)).status).toBe(200)
    expect(asked).toBe(0)
    await harness.observed(1)
    expect(harness.exchanges[0]?.plan).toBeUndefined()
  })

  it('a client that goes away while the rewrite is held back: nothing more is sent', async () => {
    harness = await startHarness(
      () => ({ ...answerOf(answers.chatStream), before: () => new Promise<void>(() => undefined) }),
      { warmSummaries: 'on' },
      planner,
    )
    const abort = new AbortController()
    const answer = fetch(`${harness.url}/v1/chat/completions`, { method: 'POST', body: ORIGINAL, signal: abort.signal })
    // The rewrite's first event (a role chunk, no text yet) is held; the client gives up meanwhile.
    while (harness.upstream.sent[0]?.length !== 1) await new Promise((resolve) => setImmediate(resolve))
    abort.abort()
    await expect(answer).rejects.toThrow()
    await harness.upstream.closed[0]
    await harness.observed(1)
    expect(harness.upstream.requests.map(rewritten)).toEqual([true])
    expect(harness.exchanges[0]?.answer.unreadable).toBe('the answer was cut: the client went away')
    expect(harness.exchanges[0]?.failOpen).toBeUndefined()
  })

  for (const encoding of ['identity', 'gzip'] as const)
    it(`a rewrite answered with JSON text (${encoding}): decided when whole, the client gets it once`, async () => {
      const plain = answers.chatJson.parts.join('')
      const body = encoding === 'gzip' ? gzipSync(plain) : Buffer.from(plain)
      const headers = ['Content-Type', 'application/json', 'Content-Length', String(body.length)]
      if (encoding === 'gzip') headers.push('Content-Encoding', 'gzip')
      harness = await startHarness(() => ({ status: 200, headers, parts: [body] }), { warmSummaries: 'on' }, planner)
      const answer = await fetch(`${harness.url}/v1/chat/completions`, {
        method: 'POST',
        body: ORIGINAL.replace('"stream":true,', ''),
      })
      expect(answer.status).toBe(200)
      expect(await answer.text()).toBe(plain)
      expect(harness.upstream.requests.map(rewritten)).toEqual([true])
      await harness.observed(1)
      expect(harness.exchanges[0]?.answer).toMatchObject({ content: 'text', usage: answers.chatJson.usage })
      expect(harness.exchanges[0]?.answer.unreadable).toBeUndefined()
      harness.test.assertClean()
    })

  it('a held rewrite flushed in many chunks waits for one drain at a time (no listener pile-up)', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    process.on('warning', onWarning)
    try {
      const padding = Array.from({ length: 30 }, () => `: ${'x'.repeat(64 * 1024)}\n\n`)
      harness = await startHarness(
        () => ({ status: 200, headers: SSE_HEADERS, parts: [...padding, ...answers.chatStream.parts] }),
        { warmSummaries: 'on' },
        planner,
      )
      const answer = await post(harness)
      expect(answer.text).toBe([...padding, ...answers.chatStream.parts].join(''))
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
  })
})
