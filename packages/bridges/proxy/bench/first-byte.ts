/**
 * What the proxy adds to the first byte of an answer, and whether its memory stays flat.
 *
 *   node --expose-gc --import tsx bench/first-byte.ts [--rounds N] [--memory-requests N]
 *
 * One process holds a node:http upstream (reads the whole body, then sends one SSE event and
 * ends), the proxy (`WarmfoldProxy`, mode `off`, the null observer) and a node:http client with
 * keep-alive. Each round sends the same body directly and through the proxy, in turn; the time
 * to first byte runs from the request's start to the first answer byte the client reads. Bodies
 * are chat requests of about 8k, 128k and 512k tokens (4 characters a token).
 */
import { Agent, createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { Context } from '@cordisjs/core'
import { WarmfoldProxy } from '../src/index.ts'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '200' },
    'memory-requests': { type: 'string', default: '10000' },
  },
})
const rounds = Number(values.rounds)
const memoryRequests = Number(values['memory-requests'])

const FIRST_EVENT = 'data: {"type":"message_start","message":{"id":"msg_b","usage":{"input_tokens":1}}}\n\n'
const upstream = createServer((request, response) => {
  request.on('data', () => undefined)
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.end(FIRST_EVENT)
  })
})
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`

const ctx = new Context()
await ctx.start()
ctx.plugin(WarmfoldProxy, { upstream: upstreamUrl, port: 0 })
await ctx.lifecycle.flush()
const proxyUrl = (ctx.proxy.address as { url: string }).url

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

function bodyOf(tokens: number): Buffer {
  const text = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((tokens * 4) / 27)).slice(0, tokens * 4)
  return Buffer.from(JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: text }] }))
}

/** Milliseconds from the request's start to the first answer byte; the answer is read to its end. */
function firstByte(base: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    let first: number | undefined
    const request = httpRequest(
      `${base}/v1/chat/completions`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (response) => {
        response.on('data', () => {
          first ??= Number(process.hrtime.bigint() - started) / 1e6
        })
        response.on('end', () => resolve(first ?? Number.NaN))
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] as number
}

const fmt = (ms: number) => ms.toFixed(2).padStart(7)
console.log(`first byte, ${rounds} rounds per size (ms)`)
console.log('tokens   direct p50  p99 | proxy p50  p99 | added p50  p99 (paired)')
for (const tokens of [8_000, 128_000, 512_000]) {
  const body = bodyOf(tokens)
  for (let warm = 0; warm < 20; warm++) {
    await firstByte(upstreamUrl, body)
    await firstByte(proxyUrl, body)
  }
  const direct: number[] = []
  const proxied: number[] = []
  const added: number[] = []
  for (let round = 0; round < rounds; round++) {
    const viaDirect = await firstByte(upstreamUrl, body)
    const viaProxy = await firstByte(proxyUrl, body)
    direct.push(viaDirect)
    proxied.push(viaProxy)
    added.push(viaProxy - viaDirect)
  }
  for (const list of [direct, proxied, added]) list.sort((a, b) => a - b)
  console.log(
    `${String(tokens).padStart(7)} ${fmt(percentile(direct, 0.5))} ${fmt(percentile(direct, 0.99))} |` +
      `${fmt(percentile(proxied, 0.5))} ${fmt(percentile(proxied, 0.99))} |` +
      `${fmt(percentile(added, 0.5))} ${fmt(percentile(added, 0.99))}   (${(body.length / 1024).toFixed(0)} KiB)`,
  )
}

const gc = (globalThis as { gc?: () => void }).gc
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1).padStart(6)
console.log(
  `\nmemory over ${memoryRequests} proxied requests of 8k tokens (MiB${gc ? ', after gc' : ', no --expose-gc'})`,
)
console.log('requests    rss   heap')
const small = bodyOf(8_000)
for (let done = 0; done <= memoryRequests; done++) {
  if (done % Math.max(1, Math.floor(memoryRequests / 10)) === 0) {
    gc?.()
    const usage = process.memoryUsage()
    console.log(`${String(done).padStart(8)} ${mib(usage.rss)} ${mib(usage.heapUsed)}`)
  }
  if (done < memoryRequests) await firstByte(proxyUrl, small)
}

agent.destroy()
await ctx.stop()
await new Promise<void>((resolve) => upstream.close(() => resolve()))
