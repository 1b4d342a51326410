import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from '@cordisjs/core'
import { canonicalize, canonicalWireJson, layoutOf, SegmentInterner } from '@warmfold/cache-ledger/prefix'
import type { ProxyStore } from '@warmfold/proxy'
import { WarmfoldProxy } from '@warmfold/proxy'
import type { SessionBackend } from '@warmfold/session'
import type { Reply } from '@warmfold/test-utils'
import { RecordingServer } from '@warmfold/test-utils'
import { vi } from 'vitest'
import { SessionProxyStore } from '../../src/proxy/session-proxy-store.ts'

/**
 * Qwen Code 0.24.4's recorded requests (OpenAI Chat, streamed), from the proxy's fixtures: two
 * conversation requests, then its toolless summary request of the second one's history.
 */
const FIXTURE = join(import.meta.dirname, '../../../bridges/proxy/test/fixtures/qwen-code-cold-0.24.4')

export interface Recorded {
  readonly file: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly bytes: string
}

export function recordedQwen(): Recorded[] {
  return readdirSync(FIXTURE)
    .filter((file) => /^0[0-2]-\w+\.json$/.test(file))
    .toSorted()
    .map((file) => {
      const { url, headers, body } = JSON.parse(readFileSync(join(FIXTURE, file), 'utf8')) as {
        url: string
        headers: Record<string, string>
        body: Record<string, unknown>
      }
      return { file, url, headers, bytes: JSON.stringify(body) }
    })
}

/** A streamed Chat Completions text answer with usage (1,000 prompt tokens, 600 of them cached). */
export function chatText(): Reply {
  const chunk = { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'm' }
  return {
    sse: [
      { ...chunk, choices: [{ index: 0, delta: { role: 'assistant', content: 'Summary: so far.' } }] },
      { ...chunk, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      {
        ...chunk,
        choices: [],
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 10,
          total_tokens: 1010,
          prompt_tokens_details: { cached_tokens: 600 },
        },
      },
    ],
  }
}

/** The share of `conversation`'s prompt (provider render order) that `sent` repeats as its prefix. */
export function prefixShare(conversation: string, sent: string): number {
  const interner = new SegmentInterner()
  const text = (bytes: string) => {
    const request = canonicalize({ body: JSON.parse(bytes), headers: {}, url: '/v1/chat/completions' }, 'openai-chat')
    return {
      env: canonicalWireJson(request.envelope),
      text: layoutOf(request, interner)
        .segments.map((s) => s.text)
        .join(''),
    }
  }
  const left = text(conversation)
  const right = text(sent)
  if (left.env !== right.env) return 0
  let same = 0
  while (same < left.text.length && left.text[same] === right.text[same]) same++
  return same / left.text.length
}

/** A running proxy replica: its context, address and store. */
export interface Replica {
  readonly ctx: Context
  readonly url: string
  readonly store: SessionProxyStore | undefined
}

/** Starts one `WarmfoldProxy` replica (warm summaries on) on `backend`'s store, or with a JSONL `log`, or neither. */
export async function startReplica(
  upstream: string,
  backend: SessionBackend | undefined,
  log?: string,
): Promise<Replica> {
  const store = backend && (await SessionProxyStore.open(backend))
  const ctx = new Context()
  await ctx.start()
  ctx.plugin(WarmfoldProxy, {
    upstream,
    port: 0,
    warmSummaries: 'on',
    ...(store ? { store: store as ProxyStore } : {}),
    ...(log === undefined ? {} : { log }),
  })
  await ctx.lifecycle.flush()
  return { ctx, url: ctx.proxy.address!.url, store }
}

/**
 * Closes a replica's proxy (server, observer, store writes), awaited, then stops its context:
 * cordis does not await a service's stop, and the tests read the log or the store next.
 */
async function stopReplica(replica: Replica): Promise<void> {
  await replica.ctx.proxy.close()
  await replica.ctx.stop()
}

/** Sends `request` through the proxy at `base` and reads its whole answer. */
export async function send(base: string, request: Recorded): Promise<number> {
  const { 'content-length': _length, host: _host, ...headers } = request.headers
  const answer = await fetch(`${base}${request.url}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: request.bytes,
  })
  await answer.arrayBuffer()
  return answer.status
}

/**
 * The two-replica case: Qwen Code's conversation requests through replica A, then its summary
 * request through replica B (both on the store `backend()` opens). Returns what the upstream got.
 */
export async function twoReplicas(backend: () => SessionBackend) {
  const requests = recordedQwen()
  const upstream = await RecordingServer.start(() => chatText())
  const a = await startReplica(upstream.origin, backend())
  const b = await startReplica(upstream.origin, backend())
  try {
    const statuses = [await send(a.url, requests[0]!), await send(a.url, requests[1]!)]
    // A's observer stores the conversation request after its answer ended, off the forward's path.
    await vi.waitFor(
      async () => {
        const held = await b.store!.recall('openai-chat', 0)
        if (!held.some((stored) => stored.body === requests[1]!.bytes)) throw new Error('not stored yet')
      },
      { timeout: 20_000 },
    )
    statuses.push(await send(b.url, requests[2]!))
    return {
      requests,
      statuses,
      received: upstream.requests.map((request) => request.body),
      replicas: [a.store!.replica, b.store!.replica] as const,
    }
  } finally {
    await stopReplica(a)
    await stopReplica(b)
    await upstream.close()
  }
}

/**
 * The same requests without a shared store: all three through one proxy writing the JSONL `log`
 * (`log` given), or the conversation requests through A and the summary through B, each on its
 * own (no `log`). Returns what the upstream got.
 */
export async function withoutStore(log?: string) {
  const requests = recordedQwen()
  const upstream = await RecordingServer.start(() => chatText())
  const a = await startReplica(upstream.origin, undefined, log)
  const b = log === undefined ? await startReplica(upstream.origin, undefined) : a
  try {
    const statuses = [await send(a.url, requests[0]!), await send(a.url, requests[1]!), await send(b.url, requests[2]!)]
    return { requests, statuses, received: upstream.requests.map((request) => request.body) }
  } finally {
    await stopReplica(a)
    if (b !== a) await stopReplica(b)
    await upstream.close()
  }
}
