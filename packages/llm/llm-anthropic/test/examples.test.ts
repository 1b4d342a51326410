import { recordCordisPrints } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main as usage } from '../examples/usage.ts'
import type { AnthropicTestServer } from './anthropic-test-server.ts'
import { startAnthropicServer } from './anthropic-test-server.ts'
import { streamReply } from './sse-script.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test); it runs
// against a recording server on 127.0.0.1 instead of the API.
describe('README examples run', () => {
  let server: AnthropicTestServer | undefined
  afterEach(async () => {
    vi.unstubAllEnvs()
    await server?.close()
  })

  it('usage: the key from ANTHROPIC_API_KEY, thinking at the requested effort, the reply and its usage', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-example')
    server = await startAnthropicServer(() =>
      streamReply({
        blocks: [
          { type: 'thinking', thinking: 'Look at the assertion.', signature: 'sig' },
          { type: 'text', text: 'The assertion expects 4.' },
        ],
        startUsage: { input_tokens: 30, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1 },
        deltaUsage: { output_tokens: 12 },
        model: 'claude-sonnet-4-6',
      }),
    )
    const { result, printed } = await recordCordisPrints(() => usage(server!.url))
    expect(printed).toEqual([])
    expect(result.text).toBe('The assertion expects 4.')
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 12 })
    const request = server.requests[0]!
    expect(request.headers['x-api-key']).toBe('sk-ant-example')
    expect(request.body).toMatchObject({
      model: 'claude-sonnet-4-6',
      max_tokens: 32000,
      thinking: { type: 'enabled', budget_tokens: 8192 },
    })
  })
})
