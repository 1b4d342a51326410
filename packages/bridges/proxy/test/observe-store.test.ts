import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import type { RequestApi } from '@warmfold/cache-ledger/prefix'
import { RecordingServer } from '@warmfold/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import type { ProxyStore, StoredConversation } from '../src/index.ts'
import { ProxyObserver, WarmfoldProxy } from '../src/index.ts'
import { chatReply } from './agents/wire-replies.ts'
import { settle } from './support/observe-settle.ts'
import { prefixShare } from './warm-support.ts'

/** A shared store in memory: what replicas behind one address share (the CLI's are SQL session stores). */
class MemoryStores {
  readonly lines: Record<string, unknown>[] = []
  readonly last = new Map<string, StoredConversation>()
  recalls = 0
  storeFor(replica: string): ProxyStore {
    return {
      replica,
      append: (line) => void this.lines.push({ replica, ...line }),
      remember: (conversation) => void this.last.set(`${replica}\n${conversation.sessionKey}`, conversation),
      recall: async (api: RequestApi, sinceMs: number) => {
        this.recalls++
        return [...this.last.values()].filter((stored) => stored.api === api && stored.at >= sinceMs)
      },
      close: async () => {},
    }
  }
}

const FIXTURE = join(import.meta.dirname, 'fixtures', 'qwen-code-cold-0.24.4')
/** Qwen Code's first two conversation requests and its toolless summary request (OpenAI Chat, streamed). */
const requests = readdirSync(FIXTURE)
  .filter((file) => /^0[0-2]-\w+\.json$/.test(file))
  .toSorted()
  .map((file) => {
    const { url, body } = JSON.parse(readFileSync(join(FIXTURE, file), 'utf8')) as { url: string; body: object }
    return { url, bytes: JSON.stringify(body) }
  })

const contexts: Context[] = []
afterEach(async () => {
  for (const ctx of contexts.splice(0)) await ctx.stop()
})

async function replica(upstream: string, store: ProxyStore, noBodies = false) {
  const observer = new ProxyObserver({ store, noBodies })
  const ctx = new Context()
  contexts.push(ctx)
  await ctx.start()
  ctx.plugin(WarmfoldProxy, { upstream, port: 0, warmSummaries: 'on', observer })
  await ctx.lifecycle.flush()
  const send = async (index: number) => {
    const request = requests[index]!
    const answer = await fetch(`${ctx.proxy.address!.url}${request.url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-never-stored' },
      body: request.bytes,
    })
    await answer.arrayBuffer()
    return answer.status
  }
  return { observer, send }
}

async function twoReplicas(noBodies: boolean) {
  const upstream = await RecordingServer.start(() =>
    chatReply({ kind: 'text', text: 'Summary.' }, true, { input: 1000, output: 10 }, 'scripted-model'),
  )
  const stores = new MemoryStores()
  try {
    const a = await replica(upstream.origin, stores.storeFor('a'), noBodies)
    const b = await replica(upstream.origin, stores.storeFor('b'), noBodies)
    expect([await a.send(0), await a.send(1)]).toEqual([200, 200])
    await settle(a.observer)
    expect(await b.send(2)).toBe(200)
    await settle(b.observer)
    return { stores, received: upstream.requests.map((request) => request.body) }
  } finally {
    await upstream.close()
  }
}

describe('observe: a store shared by replicas (warmfold proxy --store)', () => {
  it("replica B rewrites a summary request warm from replica A's last conversation request, recalled from the store", async () => {
    const { stores, received } = await twoReplicas(false)
    const conversation = JSON.parse(requests[1]!.bytes) as Record<string, unknown>
    const sent = JSON.parse(received[2]!) as Record<string, unknown>
    expect(prefixShare('openai-chat', conversation, sent).share).toBeGreaterThanOrEqual(0.98)
    // Only each session's last conversation request is stored, byte for byte; log lines carry no body and no key.
    expect([...stores.last.values()].map((stored) => stored.body)).toEqual([requests[1]!.bytes])
    expect(stores.recalls).toBe(1)
    const kinds = stores.lines.map((line) => [line.replica, (line.warmfold as { kind: string }).kind])
    expect(kinds).toEqual([
      ['a', 'conversation'],
      ['a', 'conversation'],
      ['b', 'compaction'],
    ])
    expect(stores.lines.every((line) => !('body' in line))).toBe(true)
    expect(JSON.stringify(stores.lines)).not.toContain('sk-never-stored')
  })

  it('with --no-bodies nothing is remembered in the store, so replica B sends the summary request as written', async () => {
    const { stores, received } = await twoReplicas(true)
    expect(stores.last.size).toBe(0)
    expect(received[2]).toBe(requests[2]!.bytes)
  })

  it('log and store are exclusive, each error naming both', () => {
    const store = new MemoryStores().storeFor('a')
    expect(() => new ProxyObserver({ log: 'x.jsonl', store })).toThrow(/log and store are exclusive/)
    expect(() => WarmfoldProxy.Config({ upstream: 'http://127.0.0.1:9', log: 'x.jsonl', store })).toThrow(
      'WarmfoldProxy config: log and store are exclusive',
    )
  })
})
