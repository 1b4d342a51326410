import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, mountAdapter } from './fixture.ts'
import { geminiChunks } from './gemini-stream.ts'

afterEach(disposeAll)

const emptyChunk = {
  candidates: [{ content: { parts: [{ text: '' }], role: 'model' }, index: 0 }],
  usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 },
}

describe('stalls', () => {
  it('fails with TIMEOUT when the response headers never come, and retries', async () => {
    const adapter = await mountAdapter(() => ({ hang: true }), { timeoutMs: 50, maxRetries: 1 })
    const error = await adapter.failure('TIMEOUT')
    // The attempt count is in the message; the second request may still be in flight on the server side.
    expect(error.message).toMatch(/no response or stream progress for timeoutMs \(50 ms\) \(gave up after 2 attempts\)/)
  })

  it('fails with TIMEOUT when a started stream only sends empty chunks and repeated usage, and closes it', async () => {
    const adapter = await mountAdapter(() => ({ drip: () => emptyChunk, everyMs: 5, done: false }), {
      timeoutMs: 100,
      maxRetries: 0,
    })
    await adapter.failure('TIMEOUT')
    await adapter.server.closed(0)
  })

  it('keeps a slow stream alive while every chunk makes progress', async () => {
    const chunks = geminiChunks({ parts: [{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }] })
    const adapter = await mountAdapter(() => ({ drip: (tick) => chunks[tick], everyMs: 5, done: false }), {
      timeoutMs: 5_000,
    })
    const result = await adapter.collect()
    expect(
      result
        .filter((chunk) => chunk.type === 'text-delta')
        .map((chunk) => (chunk as { delta: string }).delta)
        .join(''),
    ).toBe('abcd')
  })

  it('fails the whole call with TIMEOUT after deadlineMs, without retrying', async () => {
    const adapter = await mountAdapter(() => ({ hang: true }), { timeoutMs: 60_000, deadlineMs: 80, maxRetries: 3 })
    const error = await adapter.failure('TIMEOUT')
    // No "gave up after N attempts": the deadline is never retried.
    expect(error.message).toMatch(/did not finish within deadlineMs \(80 ms\)$/)
  })
})
