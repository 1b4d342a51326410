import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { createUserMessage, LlmError, LlmRuntime } from '@warmfold/llm'
import { createTestContext } from '@warmfold/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { APIConnectionError } from '@anthropic-ai/sdk'
import { AnthropicAdapter } from '../src/index.ts'
import { mapError } from '../src/map-error.ts'
import type { LoopHarness } from './loop-fixture.ts'
import { LOOP_MODEL, mountLoop } from './loop-fixture.ts'
import { errorReply } from './sse-script.ts'

const harnesses: LoopHarness[] = []
const folders: string[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const harness of harnesses.splice(0)) await harness.dispose()
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

/** Records everything written through console.* while `action` runs. */
async function captureConsole<T>(action: () => Promise<T>): Promise<{ result: T; output: string }> {
  const lines: string[] = []
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    vi.spyOn(console, method).mockImplementation(
      (...args: unknown[]) => void lines.push(args.map((arg) => inspect(arg, { depth: 10 })).join(' ')),
    )
  }
  const result = await action()
  return { result, output: lines.join('\n') }
}

describe('the API key', () => {
  it('is sent only as x-api-key and never appears in errors, logs, session events or raw usage', async () => {
    let key = ''
    // From the fourth conversation request on, the server rejects the key and echoes it back.
    const loop = await mountLoop({
      override: (index) =>
        index >= 3 ? errorReply(401, 'authentication_error', `invalid x-api-key: ${key}`) : undefined,
    })
    harnesses.push(loop)
    key = loop.apiKey
    const { result: agent, output } = await captureConsole(() => loop.run())
    const thrown = await loop.ctx.llm
      .generate({ provider: 'anthropic', model: LOOP_MODEL, messages: [createUserMessage('hi')] })
      .catch((error: unknown) => error)

    expect(loop.server.requests.length).toBeGreaterThanOrEqual(5)
    for (const request of loop.server.requests) {
      expect(request.headers['x-api-key']).toBe(key)
      expect(request.headers.authorization).toBeUndefined()
      expect(request.rawBody).not.toContain(key)
    }
    const end = agent.session.events.at(-1)
    expect(end).toMatchObject({ type: 'turn/end', data: { reason: 'error', errorCode: 'AUTH' } })
    expect((end!.data as { error: string }).error).toMatch(
      /answered HTTP 401 \(authentication_error, request-id req_test\): invalid x-api-key: \[redacted\]/,
    )
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
    const usages = agent.session.events.flatMap((event) =>
      event.type === 'assistant/message' ? [(event.data as { usage: { raw: unknown } }).usage.raw] : [],
    )
    expect(usages.length).toBe(3)
    expect(JSON.stringify(usages)).not.toContain(key)
  })

  it('with a trailing CRLF and spaces, is sent trimmed and redacted from turn/end, compaction/end, compaction/failure and usage.raw in the session file', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'warmfold-anthropic-key-'))
    folders.push(directory)
    const padding = '\r\n  '
    // The server echoes the x-api-key header it received into every usage, into its 400 for every
    // summary call (so compaction fails), and into the 401 that ends the turn.
    const failingStep = 24
    let echoed = ''
    const loop = await mountLoop({
      apiKeyPadding: padding,
      directory,
      usageExtra: (request) => ({ note: `billed to ${String(request.headers['x-api-key'])}` }),
      summaryOverride: (request) =>
        errorReply(400, 'invalid_request_error', `summary refused for ${String(request.headers['x-api-key'])}`),
      override: (index) =>
        index >= failingStep ? errorReply(401, 'authentication_error', `invalid x-api-key: ${echoed}`) : undefined,
    })
    harnesses.push(loop)
    const key = loop.apiKey
    echoed = key
    const { result: agent, output } = await captureConsole(() => loop.run())
    const thrown = await loop.ctx.llm
      .generate({ provider: 'anthropic', model: LOOP_MODEL, messages: [createUserMessage('hi')] })
      .catch((error: unknown) => error)
    await loop.ctx.stop()
    const files = await readdir(directory)
    const written = (await Promise.all(files.map((file) => readFile(join(directory, file), 'utf8')))).join('\n')

    for (const request of loop.server.requests) expect(request.headers['x-api-key']).toBe(key)
    const lines = written
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { type: string; data: unknown })
    const ofType = (type: string) => lines.filter((line) => line.type === type).map((line) => JSON.stringify(line.data))
    expect(ofType('turn/end').at(-1)).toContain('"errorCode":"AUTH"')
    expect(ofType('turn/end').at(-1)).toContain('invalid x-api-key: [redacted]')
    expect(ofType('compaction/end').some((data) => data.includes('summary refused for [redacted]'))).toBe(true)
    expect(ofType('compaction/failure').some((data) => data.includes('summary refused for [redacted]'))).toBe(true)
    const usages = lines
      .filter((line) => line.type === 'assistant/message')
      .map((line) => JSON.stringify((line.data as { usage: { raw: unknown } }).usage.raw))
    expect(usages).toHaveLength(failingStep)
    for (const usage of usages) expect(usage).toContain('billed to [redacted]')
    expect(LlmError.isInstance(thrown) && thrown.code).toBe('AUTH')

    const produced = [
      written,
      inspect(agent.session.events, { depth: Infinity }),
      inspect(thrown, { depth: Infinity, showHidden: true }),
      String((thrown as Error).stack),
      output,
      loop.warnings.join('\n'),
      inspect(loop.errors, { depth: Infinity }),
    ].join('\n')
    for (const form of [key, key + padding, JSON.stringify(key + padding).slice(1, -1), key.slice(-24)])
      expect(produced, `the key as ${JSON.stringify(form)}`).not.toContain(form)
  })

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
