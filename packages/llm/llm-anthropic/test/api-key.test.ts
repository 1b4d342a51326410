import { inspect } from 'node:util'
import { createUserMessage, LlmError, LlmRuntime } from '@warmfold/llm'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { AnthropicAdapter } from '../src/index.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { LOOP_MODEL, mountLoop } from './loop-fixture.ts'
import { errorReply } from './sse-script.ts'

const harnesses: LoopHarness[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

/** Records everything written through console.* while `action` runs. */
async function captureConsole<T>(action: () => Promise<T>): Promise<{ result: T; output: string }> {
  const lines: string[] = []
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map((arg) => inspect(arg, { depth: 10 })).join(' ')))
  }
  const result = await action()
  return { result, output: lines.join('\n') }
}

describe('the API key', () => {
  it('is sent only as x-api-key and never appears in errors, logs, session events or raw usage', async () => {
    let key = ''
    // From the fourth conversation request on, the server rejects the key and echoes it back.
    const loop = await mountLoop({ override: (index) => (index >= 3 ? errorReply(401, 'authentication_error', `invalid x-api-key: ${key}`) : undefined) })
    harnesses.push(loop)
    key = loop.apiKey
    const { result: agent, output } = await captureConsole(() => loop.run())
    const thrown = await loop.ctx.llm.generate({ provider: 'anthropic', model: LOOP_MODEL, messages: [createUserMessage('hi')] }).catch((error: unknown) => error)

    expect(loop.server.requests.length).toBeGreaterThanOrEqual(5)
    for (const request of loop.server.requests) {
      expect(request.headers['x-api-key']).toBe(key)
      expect(request.headers.authorization).toBeUndefined()
      expect(request.rawBody).not.toContain(key)
    }
    const end = agent.session.events.at(-1)
    expect(end).toMatchObject({ type: 'turn/end', data: { reason: 'error', errorCode: 'AUTH' } })
    expect((end!.data as { error: string }).error).toMatch(/answered HTTP 401 \(authentication_error, request-id req_test\): invalid x-api-key: \[redacted\]/)
    expect(LlmError.isInstance(thrown) && thrown.code).toBe('AUTH')

    const produced = [
      JSON.stringify(agent.session.events),
      inspect(agent.session.events, { depth: Infinity }),
      inspect(thrown, { depth: Infinity, showHidden: true }),
      String((thrown as Error).stack),
      output,
      loop.warnings.join('\n'),
      inspect(loop.errors, { depth: Infinity }),
    ].join('\n')
    expect(produced).toContain('[redacted]')
    expect(produced).not.toContain(key)
    expect(produced).not.toContain(key.slice(-24))
    const usages = agent.session.events.flatMap((event) => (event.type === 'assistant/message' ? [(event.data as { usage: { raw: unknown } }).usage.raw] : []))
    expect(usages.length).toBe(3)
    expect(JSON.stringify(usages)).not.toContain(key)
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
