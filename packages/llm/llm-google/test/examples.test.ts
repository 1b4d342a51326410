import type { RecordingServer } from '@warmfold/test-utils'
import { RecordingServer as Server, recordCordisPrints } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main as usage } from '../examples/usage.ts'
import { geminiReply } from './gemini-stream.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test); it runs
// against a recording server on 127.0.0.1 instead of the API.
describe('README examples run', () => {
  let server: RecordingServer | undefined
  afterEach(async () => {
    vi.unstubAllEnvs()
    await server?.close()
  })

  it('usage: the key from GEMINI_API_KEY, thinkingLevel at the requested effort, the reply and its usage', async () => {
    vi.stubEnv('GEMINI_API_KEY', 'AIza-example')
    server = await Server.start(() =>
      geminiReply({
        parts: [
          { text: 'Look at the assertion.', thought: true },
          { text: 'The assertion expects 4.', thoughtSignature: 'c2ln' },
        ],
        usage: {
          promptTokenCount: 30,
          cachedContentTokenCount: 0,
          candidatesTokenCount: 8,
          thoughtsTokenCount: 4,
          totalTokenCount: 42,
        },
      }),
    )
    const { result, printed } = await recordCordisPrints(() => usage(server!.origin))
    expect(printed).toEqual([])
    expect(result.text).toBe('The assertion expects 4.')
    expect(result.usage).toMatchObject({ inputTokens: 30, cacheReadTokens: 0, outputTokens: 12, reasoningTokens: 4 })
    const request = server.requests[0]!
    expect(request.headers['x-goog-api-key']).toBe('AIza-example')
    expect(request.url).toBe('/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse')
    expect(request.json.generationConfig).toEqual({
      maxOutputTokens: 65536,
      thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' },
    })
  })
})
