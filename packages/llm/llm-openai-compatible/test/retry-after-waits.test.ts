import { describe, expect, it } from 'vitest'
import { adapterHarnesses, collect, expectLlmError, MODEL, request } from './fixture.ts'
import { openaiStream, openaiUsage } from './provider-streams.ts'
import type { Reply } from '@warmfold/test-utils'

// The retry waits a server asks for, waited out for real (1.2 s in all): in the heavy set.
const harness = adapterHarnesses()

const OK: Reply = { sse: openaiStream(MODEL, { text: 'ok' }, openaiUsage(10, 0, 1, 0)) }

describe('retries wait as long as the server asks', () => {
  it('honours retry-after in seconds (and reports it on the error)', async () => {
    const server = await harness(
      (_request, index) => (index === 0 ? { status: 429, body: 'wait', headers: { 'retry-after': '1' } } : OK),
      { maxRetries: 1 },
    )
    await collect(server, request(server))
    const [first, second] = server.server.requests
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(900)

    const failing = await harness(() => ({ status: 429, body: 'wait', headers: { 'retry-after': '7' } }), {
      maxRetries: 0,
    })
    const error = await expectLlmError(() => collect(failing, request(failing)), 'RATE_LIMITED')
    expect(error.retryAfterSeconds).toBe(7)
  })

  it('honours retry-after-ms', async () => {
    const server = await harness(
      (_request, index) => (index === 0 ? { status: 503, body: 'wait', headers: { 'retry-after-ms': '200' } } : OK),
      { maxRetries: 1 },
    )
    await collect(server, request(server))
    const [first, second] = server.server.requests
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(150)
  })
})
