import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages'
import type { StreamChunk } from '@warmfold/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { streamProgress } from '../src/stream-progress.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { mountAdapter } from './adapter-fixture.ts'
import type { SseEvent } from './anthropic-test-server.ts'
import { blockEvents, messageStart } from './sse-script.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

const START = messageStart({ input_tokens: 10, output_tokens: 1 })
const PING: SseEvent = { event: 'ping', data: { type: 'ping' } }
const [TEXT_START, , , TEXT_STOP] = blockEvents({ type: 'text', text: 'ab' }, 0)
const delta = (text: string): SseEvent => ({
  event: 'content_block_delta',
  data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
})
const SAME_USAGE: SseEvent = {
  event: 'message_delta',
  data: { type: 'message_delta', delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 1 } },
}
/** Events that carry nothing: keep-alive pings, empty deltas, repeated usage. */
const IDLE_EVENTS: SseEvent[] = [
  PING,
  delta(''),
  {
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
  },
  SAME_USAGE,
]
const END: SseEvent[] = [
  TEXT_STOP!,
  {
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 42 },
    },
  },
  { event: 'message_stop', data: { type: 'message_stop' } },
]

async function serving(
  next: (tick: number) => SseEvent | undefined,
  everyMs: number,
  config: Record<string, unknown>,
): Promise<AdapterHarness> {
  const harness = await mountAdapter(() => ({ kind: 'drip', next, everyMs }), { maxRetries: 0, ...config })
  harnesses.push(harness)
  return harness
}

async function drain(harness: AdapterHarness): Promise<{ chunks: StreamChunk[]; error: unknown }> {
  const chunks: StreamChunk[] = []
  try {
    for await (const chunk of harness.ctx.llm.stream({ provider: 'anthropic', model: 'claude-test', messages: [] }))
      chunks.push(chunk)
  } catch (error) {
    return { chunks, error }
  }
  return { chunks, error: undefined }
}

describe('stream progress', () => {
  it('counts content, tool calls, new usage and the stop; pings, empty deltas, block stops and repeated usage are not progress', () => {
    const isProgress = streamProgress()
    const events = (list: SseEvent[]) => list.map((event) => isProgress(event.data as RawMessageStreamEvent))
    // The first usage of each kind is progress; the same usage again (even alternating with the other kind) is not.
    expect(events([START, PING, TEXT_START!, SAME_USAGE, ...IDLE_EVENTS, TEXT_STOP!, START, SAME_USAGE])).toEqual([
      true,
      false,
      false,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ])
    expect(
      events([
        delta('x'),
        SAME_USAGE,
        ...blockEvents({ type: 'tool_use', id: 'toolu_1', name: 'read', json: '{}' }, 1).slice(0, 1),
        ...END.slice(1),
      ]),
    ).toEqual([true, false, true, true, true])
  })
})

describe('stalled and endless streams', () => {
  it('a server that sends only pings and empty deltas, every few ms, forever, fails with TIMEOUT naming timeoutMs, and its connection is closed', async () => {
    const harness = await serving(
      (tick) => (tick === 0 ? START : tick === 1 ? TEXT_START : IDLE_EVENTS[tick % IDLE_EVENTS.length]),
      3,
      { timeoutMs: 1000 },
    )
    const { error } = await drain(harness)
    expect(error).toMatchObject({ code: 'TIMEOUT', provider: 'anthropic' })
    expect((error as Error).message).toContain(
      'no response or stream progress for timeoutMs (1000 ms) (pings and empty deltas do not count)',
    )
    await harness.server.closed(0)
    expect(harness.server.requests).toHaveLength(1)
  })

  it('a server that streams real content slowly, between pings, keeps going past timeoutMs and completes', async () => {
    const idleMs = 1000
    const contentEvery = 5
    const pieces = 25
    const written: number[] = []
    const harness = await serving(
      (tick) => {
        if (tick === 0) return START
        if (tick === 1) return TEXT_START
        if (tick % contentEvery !== 0) return IDLE_EVENTS[tick % IDLE_EVENTS.length]
        const piece = tick / contentEvery - 1
        if (piece < pieces) {
          written.push(performance.now())
          return delta('w')
        }
        return END[piece - pieces]
      },
      10,
      { timeoutMs: idleMs },
    )
    const { chunks, error } = await drain(harness)
    expect(error).toBeUndefined()
    // The fixture, not the adapter: the content really spanned more than the idle limit.
    expect(written.at(-1)! - written[0]!).toBeGreaterThan(idleMs)
    expect(
      chunks
        .filter((chunk) => chunk.type === 'text-delta')
        .map((chunk) => (chunk as { delta: string }).delta)
        .join(''),
    ).toBe('w'.repeat(pieces))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
  })

  it('a server that streams real content forever is cut at deadlineMs with TIMEOUT naming the limit, and its connection is closed', async () => {
    const harness = await serving((tick) => (tick === 0 ? START : tick === 1 ? TEXT_START : delta('more ')), 5, {
      timeoutMs: 60_000,
      deadlineMs: 1000,
      maxRetries: 2,
    })
    const { chunks, error } = await drain(harness)
    expect(chunks.some((chunk) => chunk.type === 'text-delta')).toBe(true)
    expect(error).toMatchObject({ code: 'TIMEOUT', retryable: false })
    expect((error as Error).message).toContain(
      'anthropic/claude-test: the call did not finish within deadlineMs (1000 ms)',
    )
    await harness.server.closed(0)
    expect(harness.server.requests).toHaveLength(1)
  })

  it('deadlineMs also bounds the waits between attempts: one that would outlast it is not started, and the failure itself goes to the caller', async () => {
    const harness = await mountAdapter(
      () => ({
        kind: 'status',
        status: 529,
        body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      }),
      {
        // Far shorter than the backoff, long enough for the first answer on a loaded machine.
        deadlineMs: 2_000,
        maxRetries: 5,
        retryBaseMs: 60_000,
      },
    )
    harnesses.push(harness)
    const error = await harness.failure()
    // The overloaded server is what failed the call; a TIMEOUT after a wait cut short would hide it.
    expect(error).toMatchObject({ code: 'SERVER', status: 529 })
    expect(error.message).toMatch(
      /\(not retried: waiting 60000 ms for the next attempt would outlast the call's deadline \(\d+ ms left\)\)$/,
    )
    expect(harness.server.requests).toHaveLength(1)
  })
})
