import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { resolveApiKey } from '../src/config.ts'
import type { AdapterHarness } from './adapter-fixture.ts'
import { mountAdapter } from './adapter-fixture.ts'
import { errorReply, streamReply } from './sse-script.ts'

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

describe('the API key', () => {
  it('is sent as a Bearer token, trimmed, and never appears in an error message or usage.raw', async () => {
    const key = `sk-proj-${randomBytes(16).toString('hex')}`
    const echo = (text: string) => `${text} (you sent ${key})`
    const adapter = await mountAdapter(
      (request, index) =>
        index === 0
          ? errorReply(401, 'invalid_request_error', 'invalid_api_key', echo('Incorrect API key provided'))
          : streamReply({
              items: [{ type: 'message', text: 'ok' }],
              usage: { input_tokens: 3, output_tokens: 1, echoed: String(request.headers.authorization) },
            }),
      { apiKey: `${key}\r\n`, maxRetries: 0 },
    )
    harnesses.push(adapter)
    const error = await adapter.failure()
    expect(error.code).toBe('AUTH')
    expect(error.message).not.toContain(key)
    expect(JSON.stringify({ ...error, cause: String(error.cause) })).not.toContain(key)
    expect(adapter.server.requests[0]!.headers.authorization).toBe(`Bearer ${key}`)
    const chunks = await adapter.collect()
    const usage = chunks.find((chunk) => chunk.type === 'usage')
    expect(JSON.stringify(usage)).not.toContain(key)
    expect(JSON.stringify(usage)).toContain('Bearer')
  })

  it('resolving fails naming the variable, never a value, when apiKeyEnv is unset', () => {
    expect(() => resolveApiKey({ apiKeyEnv: 'WARMFOLD_TEST_UNSET_OPENAI_KEY' }, {})).toThrow(
      /environment variable WARMFOLD_TEST_UNSET_OPENAI_KEY \(apiKeyEnv\) is not set/,
    )
    expect(resolveApiKey({ apiKeyEnv: 'K' }, { K: ' sk-1 \n' })).toBe('sk-1')
  })
})
