import { inspect } from 'node:util'
import { APIConnectionError } from '@anthropic-ai/sdk'
import { LlmRuntime } from '@warmfold/llm'
import { createTestContext } from '@warmfold/test-utils'
import { describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src/index.ts'
import { mapError } from '../src/map-error.ts'

// The key through the agent loop and the engine (requests, errors, logs, session events and files) is
// checked in packages/testing/integration/test/adapters/anthropic/api-key.test.ts.
const LOOP_MODEL = 'claude-loop'

describe('the API key', () => {
  it('is redacted from a low-level cause that quotes it; a cause without it is kept as is', () => {
    const secret = 'sk-ant-api03-cause-secret-0123456789'
    const context = { provider: 'anthropic', model: LOOP_MODEL, secret }
    const quoting = mapError(
      new APIConnectionError({ cause: new TypeError(`Headers.append: "${secret}" is an invalid header value.`) }),
      context,
    )
    const thrown = mapError(new Error(`stream broke near ${secret}`), context)
    for (const error of [quoting, thrown]) {
      expect(
        inspect(error, { depth: Infinity, showHidden: true }) + String((error.cause as Error).stack),
      ).not.toContain(secret)
      expect(inspect(error.cause)).toContain('[redacted]')
    }
    const plain = new TypeError('fetch failed')
    expect(mapError(new APIConnectionError({ cause: plain }), context).cause).toBe(plain)
  })

  it('is never part of a config error', async () => {
    const context = await createTestContext()
    try {
      context.ctx.plugin(LlmRuntime)
      context.ctx.plugin(AnthropicAdapter, { apiKey: 'sk-ant-inline-secret-value', apiKeyEnv: 'ALSO_SET' })
      await new Promise((resolve) => setImmediate(resolve))
      const text = inspect(context.errors, { depth: Infinity })
      expect(text).toMatch(/apiKey and apiKeyEnv are exclusive/)
      expect(text).not.toContain('sk-ant-inline-secret-value')
    } finally {
      await context.dispose()
    }
  })
})
