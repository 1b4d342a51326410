import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { detectApi } from '@warmfold/cache-ledger/prefix'
import type { Reply } from '@warmfold/test-utils'
import { RecordingServer } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { WarmfoldProxy } from '../src/index.ts'
import { anthropicReply, chatReply, geminiReply, responsesReply } from './agents/wire-replies.ts'
import { prefixShare } from './warm-support.ts'

/**
 * The recorded agents' requests (`test/fixtures/`) sent in order, byte for byte as each agent sent
 * them, through the whole proxy (forward, observe, warm) to a scripted upstream over real HTTP.
 */
const FIXTURES = join(import.meta.dirname, 'fixtures')

interface Recorded {
  readonly file: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly bytes: string
  readonly api: RequestApi
}

function recording(name: string): Recorded[] {
  const dir = join(FIXTURES, name)
  return readdirSync(dir)
    .filter((file) => /^\d+-\w+\.json$/.test(file))
    .toSorted()
    .map((file) => {
      const { url, headers, body } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
        url: string
        headers: Record<string, string>
        body: Record<string, unknown>
      }
      const detected = detectApi({ url, body, headers: {} }, undefined)
      if (!('api' in detected)) throw new Error(`${name}/${file}: ${detected.error}`)
      return { file, url, headers, bytes: JSON.stringify(body), api: detected.api }
    })
}

/** A text answer in each API's shape, streamed when the request asked for it. */
function textAnswer(api: RequestApi, body: Record<string, unknown>, url: string, serial: number): Reply {
  const turn = { kind: 'text', text: 'Summary: the task so far.' } as const
  const usage = { input: 1000, output: 10 }
  const model = String(body.model ?? 'scripted')
  if (api === 'openai-chat') return chatReply(turn, body.stream === true, usage, model)
  if (api === 'openai-responses') return responsesReply(turn, usage, model, serial)
  if (api === 'gemini') return geminiReply(turn, url.includes(':streamGenerateContent'), usage, model)
  return anthropicReply(turn, body.stream === true, usage, model, serial)
}

const contexts: Context[] = []
const servers: RecordingServer[] = []
afterEach(async () => {
  for (const ctx of contexts.splice(0)) await ctx.stop()
  for (const server of servers.splice(0)) await server.close()
})

async function replay(name: string, warmSummaries: 'off' | 'on', prices?: WarmfoldProxy.Prices) {
  const requests = recording(name)
  const upstream = await RecordingServer.start((request, index) =>
    textAnswer(requests[index]!.api, request.json as Record<string, unknown>, request.url, index),
  )
  servers.push(upstream)
  const ctx = new Context()
  contexts.push(ctx)
  await ctx.start()
  const log = join(mkdtempSync(join(tmpdir(), 'proxy-replay-')), 'proxy.jsonl')
  ctx.plugin(WarmfoldProxy, { upstream: upstream.origin, port: 0, warmSummaries, log, ...(prices ? { prices } : {}) })
  await ctx.lifecycle.flush()
  for (const request of requests) {
    const { 'content-length': _length, host: _host, ...headers } = request.headers
    const answer = await fetch(`${ctx.proxy.address!.url}${request.url}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: request.bytes,
    })
    expect(answer.status, request.file).toBe(200)
    await answer.arrayBuffer()
  }
  const proxy = ctx.proxy
  await ctx.stop()
  await proxy.close()
  contexts.splice(contexts.indexOf(ctx), 1)
  const lines = readFileSync(log, 'utf8').trim().split('\n')
  const kinds = lines.map((line) => (JSON.parse(line) as { warmfold: { kind: string } }).warmfold.kind)
  return { requests, received: upstream.requests.map((request) => request.body), kinds }
}

describe('recorded agents through the whole proxy over HTTP', () => {
  for (const name of ['codex-0.171.0', 'qwen-code-cold-0.24.4', 'gemini-cli-0.61.0', 'pi-0.73.1', 'opencode-1.18.33'])
    it(`${name}: every other request byte for byte; each summary request warm with --warm-summaries on, as written when off`, async () => {
      for (const mode of ['off', 'on'] as const) {
        const { requests, received, kinds } = await replay(name, mode)
        expect(received).toHaveLength(requests.length)
        let lastConversation: Recorded | undefined
        requests.forEach((request, index) => {
          const summary = request.file.includes('-summary')
          if (!summary || mode === 'off') expect(received[index], `${mode} ${request.file}`).toBe(request.bytes)
          if (summary) {
            // The proxy log counts it as a compaction in either mode.
            expect(kinds[index], `${mode} ${request.file}`).toBe('compaction')
            const conversation = JSON.parse(lastConversation!.bytes) as Record<string, unknown>
            const sent = JSON.parse(received[index]!) as Record<string, unknown>
            const share = prefixShare(request.api, conversation, sent, lastConversation!.url).share
            if (mode === 'on') expect(share, request.file).toBeGreaterThanOrEqual(0.98)
            else expect(share, request.file).toBeLessThan(0.5)
          }
          if (request.file.includes('-conversation')) lastConversation = request
        })
      }
    })

  for (const name of ['claude-code-2.1.332', 'qwen-code-0.24.4'])
    it(`${name}: its already-warm summary request goes through untouched and is logged as a compaction`, async () => {
      const { requests, received, kinds } = await replay(name, 'on')
      expect(received).toEqual(requests.map((request) => request.bytes))
      requests.forEach((request, index) => {
        if (request.file.includes('-summary')) expect(kinds[index], request.file).toBe('compaction')
      })
    })

  it('with a price (cache read 0.1×), pi’s replay is sent (it costs less) and opencode’s transcript as written (the replay would cost more)', async () => {
    const prices = { name: 'read-0.1', cacheRead: 0.1, cacheWrite: 1.25, output: 5, usdPerMillionInput: null }
    for (const [name, rewritten] of [
      ['pi-0.73.1', true],
      ['opencode-1.18.33', false],
    ] as const) {
      const { requests, received, kinds } = await replay(name, 'on', prices)
      requests.forEach((request, index) => {
        const summary = request.file.includes('-summary')
        if (summary) expect(kinds[index], request.file).toBe('compaction')
        expect(received[index] === request.bytes, `${name} ${request.file}`).toBe(!(summary && rewritten))
      })
    }
  })
})
