import { describe, expect, it } from 'vitest'
import { StreamMapper } from '../src/map-stream.ts'
import type { AdapterHarness, HarnessConfig } from './fixture.ts'
import { adapterHarnesses, collect, expectLlmError, MODEL, request } from './fixture.ts'
import { chunk, usageChunk } from './provider-streams.ts'
import type { Reply } from '@warmfold/test-utils'

const mount = adapterHarnesses()
const serving = (reply: Reply, config: HarnessConfig): Promise<AdapterHarness> =>
  mount(() => reply, { maxRetries: 0, ...config })

const USAGE = { prompt_tokens: 10, completion_tokens: 0, total_tokens: 10 }

/** Chunks that carry nothing: what a stuck server (or a proxy's keep-alive) may send forever. */
const EMPTY_CHUNKS: object[] = [
  chunk(MODEL, {}),
  { ...usageChunk(MODEL, USAGE), usage: undefined },
  chunk(MODEL, { content: '' }),
  chunk(MODEL, { reasoning_content: '' }),
  chunk(MODEL, { content: null, tool_calls: [] }),
  // The same usage again and again is no progress either.
  usageChunk(MODEL, USAGE),
]

describe('stream progress', () => {
  it('counts content, reasoning, tool calls, new usage and the first finish reason, and nothing else', () => {
    const mapper = new StreamMapper('p', 'generic')
    for (const empty of EMPTY_CHUNKS) mapper.push(empty)
    // Only the first sight of the usage object counted.
    expect(mapper.progress).toBe(1)
    for (const empty of EMPTY_CHUNKS) mapper.push(empty)
    expect(mapper.progress).toBe(1)
    mapper.push(chunk(MODEL, { content: 'a' }))
    mapper.push(chunk(MODEL, { reasoning_content: 'b' }))
    mapper.push(
      chunk(MODEL, {
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } }],
      }),
    )
    mapper.push(chunk(MODEL, { tool_calls: [{ index: 0, id: 'call_1', function: { arguments: '' } }] }))
    mapper.push(chunk(MODEL, { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }))
    expect(mapper.progress).toBe(5)
    mapper.push(chunk(MODEL, {}, 'stop'))
    mapper.push(chunk(MODEL, {}, 'stop'))
    mapper.push(usageChunk(MODEL, { ...USAGE, completion_tokens: 3 }))
    expect(mapper.progress).toBe(7)
  })
})

describe('stalled and endless streams', () => {
  it('a server that sends only empty chunks, every few ms, forever, fails with TIMEOUT naming timeoutMs, and its connection is closed', async () => {
    const harness = await serving(
      {
        drip: (tick) =>
          tick === 0 ? chunk(MODEL, { role: 'assistant', content: '' }) : EMPTY_CHUNKS[tick % EMPTY_CHUNKS.length],
        everyMs: 3,
      },
      { timeoutMs: 1000 },
    )
    const error = await expectLlmError(() => collect(harness, request(harness)), 'TIMEOUT')
    expect(error.message).toContain('no stream progress')
    expect(error.message).toContain('timeoutMs (1000 ms)')
    await harness.server.closed(0)
    expect(harness.server.requests).toHaveLength(1)
  })

  it('a server that streams real content slowly, between empty chunks, keeps going past timeoutMs and completes', async () => {
    const idleMs = 1000
    const contentEvery = 5
    const pieces = 25
    const written: number[] = []
    const harness = await serving(
      {
        drip: (tick) => {
          if (tick % contentEvery !== 0) return EMPTY_CHUNKS[tick % EMPTY_CHUNKS.length]
          const piece = tick / contentEvery
          if (piece > pieces) return undefined
          written.push(performance.now())
          return piece < pieces ? chunk(MODEL, { content: 'w' }) : chunk(MODEL, {}, 'stop')
        },
        everyMs: 10,
      },
      { timeoutMs: idleMs },
    )
    const chunks = await collect(harness, request(harness))
    // The fixture, not the adapter: the content really spanned more than the idle limit.
    expect(written.at(-1)! - written[0]!).toBeGreaterThan(idleMs)
    expect(
      chunks
        .filter((part) => part.type === 'text-delta')
        .map((part) => (part as { delta: string }).delta)
        .join(''),
    ).toBe('w'.repeat(pieces))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
  })

  it('a server that streams real content forever is cut at deadlineMs with TIMEOUT naming the limit, and its connection is closed', async () => {
    const harness = await serving(
      { drip: () => chunk(MODEL, { content: 'more ' }), everyMs: 5 },
      { timeoutMs: 60_000, deadlineMs: 1000 },
    )
    const seen: string[] = []
    const error = await expectLlmError(async () => {
      for await (const part of harness.ctx.llm.stream(request(harness))) seen.push(part.type)
    }, 'TIMEOUT')
    expect(seen).toContain('text-delta')
    expect(error.message).toContain('did not finish within deadlineMs (1000 ms)')
    expect(error.retryable).toBe(false)
    await harness.server.closed(0)
  })

  it('deadlineMs also bounds the wait for the response headers', async () => {
    const harness = await serving({ hang: true }, { timeoutMs: 60_000, deadlineMs: 200 })
    const error = await expectLlmError(() => collect(harness, request(harness)), 'TIMEOUT')
    expect(error.message).toContain('deadlineMs (200 ms)')
    await harness.server.closed(0)
  })
})
