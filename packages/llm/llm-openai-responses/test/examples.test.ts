import type { RecordingServer } from '@warmfold/test-utils'
import { recordCordisPrints, RecordingServer as Server } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main as usage } from '../examples/usage.ts'
import { promptCacheKeyFor } from '@warmfold/llm'
import { streamReply } from './sse-script.ts'

// The README shows this file verbatim (checked by test-utils' readme-examples test); it runs
// against a recording server on 127.0.0.1 instead of the API.
describe('README examples run', () => {
  let server: RecordingServer | undefined
  afterEach(async () => {
    vi.unstubAllEnvs()
    await server?.close()
  })

  it('usage: the key from OPENAI_API_KEY, reasoning at the requested effort, the reply and its cached usage', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-proj-example')
    server = await Server.start(() =>
      streamReply({
        items: [
          { type: 'reasoning', id: 'rs_1', summary: ['Look at the assertion.'], encrypted: 'enc' },
          { type: 'message', text: 'The assertion expects 4.' },
        ],
        usage: {
          input_tokens: 2048,
          input_tokens_details: { cached_tokens: 1920 },
          output_tokens: 12,
          output_tokens_details: { reasoning_tokens: 4 },
        },
      }),
    )
    const { result, printed } = await recordCordisPrints(() => usage(server!.baseURL))
    expect(printed).toEqual([])
    expect(result.text).toBe('The assertion expects 4.')
    expect(result.usage).toMatchObject({
      inputTokens: 128,
      cacheReadTokens: 1920,
      outputTokens: 12,
      reasoningTokens: 4,
    })
    const request = server.requests[0]!
    expect(request.url).toBe('/v1/responses')
    expect(request.headers.authorization).toBe('Bearer sk-proj-example')
    expect(request.json).toMatchObject({
      model: 'gpt-5.2',
      instructions: 'You are a coding agent.',
      reasoning: { effort: 'high', summary: 'auto' },
      max_output_tokens: 32000,
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: promptCacheKeyFor('session-42'),
      prompt_cache_retention: '24h',
    })
  })
})
