import type { LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { afterEach, describe, expect, it } from 'vitest'
import { streamProgress } from '../src/map-stream.ts'
import type { Harness } from './fixture.ts'
import { mount, WIRE_MODEL } from './fixture.ts'
import { chatChunk } from './sse.ts'

const harnesses: Harness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.finish()
})

describe('stream progress', () => {
  it('counts content, block edges, tool calls and the finish; stream-start, metadata, raw parts and empty deltas are not progress', () => {
    const isProgress = streamProgress()
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', id: 'x' },
      { type: 'raw', rawValue: {} },
      { type: 'text-delta', id: 't', delta: '' },
      { type: 'tool-input-delta', id: 'c', delta: '' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'a' },
      { type: 'reasoning-delta', id: 'r', delta: '', providerMetadata: { anthropic: { signature: 's' } } },
      { type: 'tool-call', toolCallId: 'c', toolName: 'n', input: '{}' },
    ]
    expect(parts.map(isProgress)).toEqual([false, false, false, false, false, true, true, true, true])
  })
})

describe('stalled streams', () => {
  it('a server that keeps sending empty deltas forever fails with TIMEOUT naming timeoutMs, and its connection is closed', async () => {
    const harness = await mount(
      'compat',
      () => ({
        drip: (tick) => chatChunk(WIRE_MODEL.compat, tick === 0 ? { role: 'assistant', content: '' } : { content: '' }),
        everyMs: 3,
      }),
      {
        // Long enough for a loaded machine to deliver the request before the client gives up.
        timeoutMs: 1000,
        maxRetries: 0,
      },
    )
    harnesses.push(harness)
    const error = await harness.failure()
    expect(error).toMatchObject({ code: 'TIMEOUT', provider: 'ai' })
    expect(error.message).toContain('timeoutMs (1000 ms)')
    await harness.server.closed(0)
  })

  it('a server that never answers fails with TIMEOUT while waiting for the response', async () => {
    // Long enough for a loaded machine to deliver the request before the client gives up on the answer.
    const harness = await mount('anthropic', () => ({ hang: true }), { timeoutMs: 1000, maxRetries: 0 })
    harnesses.push(harness)
    expect(await harness.failure()).toMatchObject({ code: 'TIMEOUT' })
    await harness.server.closed(0)
  })

  it('a slow but steady stream is not cut: progress restarts the budget', async () => {
    const harness = await mount(
      'compat',
      () => ({
        drip: (tick) =>
          tick < 6
            ? chatChunk(WIRE_MODEL.compat, { content: 'x' })
            : tick === 6
              ? chatChunk(WIRE_MODEL.compat, {}, 'stop')
              : undefined,
        everyMs: 40,
      }),
      { timeoutMs: 1000, maxRetries: 0 },
    )
    harnesses.push(harness)
    const chunks = await harness.collect()
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
  })
})
