import { recordCordisPrints, RecordingServer } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main as usage } from '../examples/usage.ts'
import { anthropicStream } from './sse.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test); it runs
// against a recording server on 127.0.0.1 instead of the API.
describe('README examples run', () => {
  let server: RecordingServer | undefined
  afterEach(async () => {
    vi.unstubAllEnvs()
    await server?.close()
  })

  it('usage: an @ai-sdk/anthropic model, thinking at the requested effort, breakpoints, the reply and its cache usage', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-example')
    server = await RecordingServer.start(() => ({
      sse: anthropicStream({
        blocks: [
          { type: 'thinking', thinking: 'Look at the assertion.', signature: 'sig' },
          { type: 'text', text: 'The assertion expects 4.' },
        ],
        startUsage: { input_tokens: 30, cache_read_input_tokens: 0, cache_creation_input_tokens: 12, output_tokens: 1 },
        deltaUsage: { output_tokens: 12 },
      }),
      done: false,
    }))
    const { result, printed } = await recordCordisPrints(() => usage(server!.baseURL))
    expect(printed).toEqual([])
    expect(result.text).toBe('The assertion expects 4.')
    expect(result.usage).toMatchObject({ inputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 12, outputTokens: 12 })
    const request = server.requests[0]!
    expect(request.headers['x-api-key']).toBe('sk-ant-example')
    expect(request.json).toMatchObject({
      model: 'claude-sonnet-4-6',
      thinking: { type: 'enabled', budget_tokens: 8192 },
      system: [{ cache_control: { type: 'ephemeral' } }],
    })
  })
})
