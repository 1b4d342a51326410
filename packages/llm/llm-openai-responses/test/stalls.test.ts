import { afterEach, describe, expect, it } from 'vitest'
import { streamProgress } from '../src/stream-progress.ts'
import type { ResponsesEvent } from '../src/map-stream.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { mountAdapter } from './adapter-fixture.ts'
import { replyEvents } from './sse-script.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

const data = (item: unknown) => (item as { data: ResponsesEvent }).data
const EVENTS = replyEvents({ items: [{ type: 'message', text: 'ab' }] }).map(data)
const IN_PROGRESS = EVENTS[1]!
const EMPTY_DELTA: ResponsesEvent = { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: '' }

describe('stalls', () => {
  it('counts items and non-empty deltas as progress; in_progress, content parts and empty deltas are not', () => {
    const isProgress = streamProgress()
    expect(EVENTS.map((event) => [event.type, isProgress(event)])).toEqual([
      ['response.created', false],
      ['response.in_progress', false],
      ['response.output_item.added', true],
      ['response.content_part.added', false],
      ['response.output_text.delta', true],
      ['response.output_text.delta', true],
      ['response.output_text.done', false],
      ['response.content_part.done', false],
      ['response.output_item.done', true],
      ['response.completed', true],
    ])
    expect(isProgress(EMPTY_DELTA)).toBe(false)
  })

  it('a server that only sends in_progress and empty deltas fails with TIMEOUT naming timeoutMs, and its connection is closed', async () => {
    const harness = await mountAdapter(
      () => ({
        drip: (tick) => (tick < 3 ? EVENTS[tick] && { ...EVENTS[tick] } : tick % 2 ? IN_PROGRESS : EMPTY_DELTA),
        everyMs: 3,
        done: false,
      }),
      { maxRetries: 0, timeoutMs: 500 },
    )
    harnesses.push(harness)
    const error = await harness.failure()
    expect(error).toMatchObject({ code: 'TIMEOUT', provider: 'openai' })
    expect(error.message).toContain('no response or stream progress for timeoutMs (500 ms)')
    await harness.server.closed(0)
  })

  it('a server that never answers fails with TIMEOUT', async () => {
    const harness = await mountAdapter(() => ({ hang: true }), { maxRetries: 0, timeoutMs: 300 })
    harnesses.push(harness)
    expect((await harness.failure()).code).toBe('TIMEOUT')
  })
})
