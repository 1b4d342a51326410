import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { canonicalJson } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import type { RecordedRequest, Reply } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AdapterHarness } from '../../../../../llm/llm-openai-compatible/test/fixture.ts'
import { KEY_ENV, MODEL, mountAdapter, SECRET_KEY } from '../../../../../llm/llm-openai-compatible/test/fixture.ts'

// The adapter's own redaction (errors, warnings, logs, raw usage) is checked in
// packages/llm/llm-openai-compatible/test/secrets.test.ts; this is the same key through the agent loop.

const harnesses: AdapterHarness[] = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const harness of harnesses.splice(0)) await harness.dispose()
})

function expectNoKey(text: string, where: string): void {
  expect(text, where).not.toContain(SECRET_KEY)
  // No fragment either (a cut message could keep part of the key).
  expect(text, where).not.toContain('SECRET')
}

/** A 401 that echoes the Authorization header, as a careless server could send. */
const echoAuthorization = (request: RecordedRequest): Reply => ({
  status: 401,
  body: {
    error: {
      message: `Incorrect API key provided: ${request.headers.authorization}. Find your key at https://example.com.`,
      type: 'invalid_request_error',
      code: 'invalid_api_key',
    },
  },
})

describe('the API key never leaves the Authorization header', () => {
  it('through the agent loop: a 401 that echoes the key leaves no key in the session events', async () => {
    vi.stubEnv(KEY_ENV, SECRET_KEY)
    const harness = await mountAdapter(echoAuthorization, { apiKeyEnv: KEY_ENV })
    harnesses.push(harness)
    harness.ctx.plugin(SessionStore, {})
    harness.ctx.plugin(ToolRegistry)
    harness.ctx.plugin(AgentLoop)
    const agent = await harness.ctx.agentLoop.create('secret', { provider: harness.provider, model: MODEL })
    agent.followup('hello')
    await agent.whenIdle()
    const events = canonicalJson(agent.session.events)
    expect(agent.session.events.at(-1)).toMatchObject({
      type: 'turn/end',
      data: { reason: 'error', errorCode: 'AUTH' },
    })
    expect(events).toContain('[redacted]')
    expectNoKey(events, 'session events')
    harness.assertClean()
  })
})
