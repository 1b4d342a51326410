import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CompactionInvariants } from '@warmfold/compaction'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions } from '@warmfold/llm'
import { canonicalJson, LlmRuntime } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { RecordedRequest, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import { KEY_ENV, SECRET_KEY } from '../../../../../llm/llm-openai-compatible/test/fixture.ts'
import { deepseekStream, deepseekUsage } from '../../../../../llm/llm-openai-compatible/test/provider-streams.ts'

const MODEL = 'deepseek-v4-flash'
const STEPS = 30
const SYSTEM = 'You are a coding agent.'
const SUMMARY = 'Goal: refactor the project. Files: src/file-0.ts to src/file-29.ts were read. Next: run the tests.'
const ENVELOPE = { reasoningEffort: 'max', temperature: 0.3, stop: ['<halt>'] }

/** Deterministic filler without long repeated runs. */
function filler(step: number, length: number): string {
  let text = ''
  let state = (step + 1) * 2654435761
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2147483648
    text += `${state.toString(36)} `
  }
  return text.slice(0, length)
}

function isSummaryRequest(request: RecordedRequest): boolean {
  const last = request.json.messages.at(-1)
  return last?.role === 'user' && last.content === COMPACTION_INSTRUCTION
}

/** Prompt usage as a prefix cache would report it: the bytes shared with the previous request are hits. */
function usageFor(request: RecordedRequest, previous: RecordedRequest | undefined): object {
  let shared = 0
  const before = previous?.body ?? ''
  while (shared < before.length && shared < request.body.length && before[shared] === request.body[shared]) shared++
  const prompt = Math.ceil(request.body.length / 4)
  const hit = Math.min(prompt, Math.floor(shared / 4))
  return deepseekUsage(hit, prompt - hit, 40, 12)
}

interface Run extends TestContext {
  server: RecordingServer
  /** `session.events.length` when each request was handed to the adapter. */
  marks: number[]
}

/** The real runtime, store, loop, tools, meter, invariants and engine, with the adapter pointed at `server`. */
async function mountStack(
  server: RecordingServer,
  store: { store?: 'file'; directory?: string },
  adapter: ({ apiKeyEnv: string } | { apiKey: string }) & { maxRetries?: number },
): Promise<TestContext> {
  const context = await createTestContext()
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, store)
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(CompactionInvariants)
  ctx.plugin(BasicCompactionEngine, {})
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'deepseek',
    baseURL: server.baseURL,
    dialect: 'deepseek',
    models: {
      [MODEL]: { contextWindow: 8000, defaultMaxTokens: 500, efforts: ['off', 'high', 'max'], defaultEffort: 'high' },
    },
    retryBaseMs: 1,
    ...adapter,
  })
  return context
}

const runs: Run[] = []
const folders: string[] = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const run of runs.splice(0)) {
    await run.dispose()
    await run.server.close()
  }
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
})

/** The real runtime, store, loop, tools, meter, invariants and engine; the adapter talks HTTP to the recording server. */
async function runSession(): Promise<{ run: Run; session: Session }> {
  vi.stubEnv(KEY_ENV, SECRET_KEY)
  let conversationCalls = 0
  const server = await RecordingServer.start((request, index) => {
    const previous = server.requests[index - 1]
    const usage = usageFor(request, previous)
    if (isSummaryRequest(request))
      return { sse: deepseekStream(MODEL, { reasoning: 'Condensing the session.', text: SUMMARY }, usage) }
    const step = conversationCalls++
    if (step >= STEPS)
      return { sse: deepseekStream(MODEL, { reasoning: 'Everything is read.', text: 'All done.' }, usage) }
    return {
      sse: deepseekStream(
        MODEL,
        // A space after the colon: the raw argument string must be replayed as is, never re-serialized.
        {
          reasoning: `Step ${step}: the next file to read is src/file-${step}.ts.`,
          text: `Reading file ${step}.`,
          toolCalls: [{ id: `call_${step}`, name: 'read', arguments: `{"path": "src/file-${step}.ts"}` }],
        },
        usage,
      ),
    }
  })
  const context = await mountStack(server, {}, { apiKeyEnv: KEY_ENV })
  const { ctx } = context
  let step = 0
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: () => filler(1000 + step++, 1200),
  })
  ctx.tools.register({
    name: 'write',
    description: 'Write a file',
    parameters: { type: 'object' },
    execute: () => 'ok',
  })
  const run: Run = Object.assign(context, { server, marks: [] as number[] })
  runs.push(run)
  const agent = await ctx.agentLoop.create('session', {
    provider: 'deepseek',
    model: MODEL,
    system: SYSTEM,
    ...ENVELOPE,
  })
  ctx.on('llm/stream', (_options: GenerateOptions) => void run.marks.push(agent.session.events.length))
  agent.followup('Refactor the project.')
  await agent.whenIdle()
  return { run, session: agent.session }
}

const json = (value: unknown) => JSON.stringify(value)

// A whole session over HTTP: a few seconds alone, more on a loaded machine, so not the default 5 s.
describe(
  'through the real agent loop and BasicCompactionEngine (DeepSeek dialect, effort max)',
  { timeout: 30_000 },
  () => {
    it('keeps every conversation request append-only between logged rewrites, and sends warm summary requests', async () => {
      const { run, session } = await runSession()
      const { server, marks } = run
      expect(session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'stop' } })
      expect(marks).toHaveLength(server.requests.length)
      const summaries = server.where(isSummaryRequest)
      expect(summaries.length, 'a compaction happened').toBeGreaterThanOrEqual(1)
      expect(session.events.filter((event) => event.type === 'compaction/summary')).toHaveLength(summaries.length)

      // C1: each conversation request keeps every earlier element byte-identical, unless a
      // durable rewrite (compaction/summary or compaction/prune) was logged in between.
      let previous: number | undefined
      let extended = 0
      let rewritten = 0
      for (const [index, request] of server.requests.entries()) {
        if (isSummaryRequest(request)) continue
        if (previous !== undefined) {
          const before = server.requests[previous]!.json
          const rewrites = session.events
            .slice(marks[previous], marks[index])
            .filter((event) => event.type === 'compaction/summary' || event.type === 'compaction/prune')
          const { messages, ...envelope } = request.json
          const { messages: beforeMessages, ...beforeEnvelope } = before
          expect(json(envelope), `request ${index}: envelope`).toBe(json(beforeEnvelope))
          if (rewrites.length === 0) {
            expect(messages.length, `request ${index} grows`).toBeGreaterThan(beforeMessages.length)
            beforeMessages.forEach((element: unknown, position: number) =>
              expect(json(messages[position]), `request ${index}, message ${position}`).toBe(json(element)),
            )
            extended++
          } else {
            expect(json(messages[0]), `request ${index}: the system message survives the rewrite`).toBe(
              json(beforeMessages[0]),
            )
            rewritten++
          }
        }
        previous = index
      }
      expect(extended).toBeGreaterThan(20)
      expect(rewritten).toBeGreaterThanOrEqual(1)

      // C2 + C3: the summary request is the previous conversation request's envelope, byte for
      // byte (only max_tokens may differ), with that request's region messages plus one instruction.
      for (const summary of summaries) {
        const index = server.requests.indexOf(summary)
        const conversation = server.requests
          .slice(0, index)
          .filter((request) => !isSummaryRequest(request))
          .at(-1)!.json
        const { messages, max_tokens: _summaryCap, ...envelope } = summary.json
        const { messages: conversationMessages, max_tokens: _conversationCap, ...conversationEnvelope } = conversation
        expect(json(envelope)).toBe(json(conversationEnvelope))
        expect(json(summary.json.tools)).toBe(json(conversation.tools))
        expect(summary.json.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual([
          'read',
          'write',
        ])
        expect(messages[0]).toEqual({ role: 'system', content: SYSTEM })
        expect(summary.json).toMatchObject({
          thinking: { type: 'enabled' },
          reasoning_effort: 'max',
          temperature: 0.3,
          stop: ['<halt>'],
        })
        // The region, or the whole last request when the region is its prefix (a read of all it cached).
        expect(messages.length - 1).toBeLessThanOrEqual(conversationMessages.length)
        messages
          .slice(0, -1)
          .forEach((element: unknown, position: number) =>
            expect(json(element), `summary message ${position}`).toBe(json(conversationMessages[position])),
          )
        expect(messages.at(-1)).toEqual({ role: 'user', content: COMPACTION_INSTRUCTION })
      }

      // Raw tool arguments and DeepSeek's reasoning_content are replayed exactly.
      const replayed = server.requests[2]!.json.messages.find(
        (message: { role: string }) => message.role === 'assistant',
      )
      expect(replayed).toEqual({
        role: 'assistant',
        content: 'Reading file 0.',
        reasoning_content: 'Step 0: the next file to read is src/file-0.ts.',
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'read', arguments: '{"path": "src/file-0.ts"}' } },
        ],
      })
      expect(server.requests[2]!.body).toContain(String.raw`"arguments":"{\"path\": \"src/file-0.ts\"}"`)

      // The key went out only as the Authorization header; nothing the run produced contains it.
      for (const request of server.requests) expect(request.headers.authorization).toBe(`Bearer ${SECRET_KEY}`)
      expect(canonicalJson(session.events)).not.toContain(SECRET_KEY)
      expect(canonicalJson(session.events)).not.toContain('SECRET')
      const usages = session.events
        .filter((event) => event.type === 'assistant/message')
        .map((event) => (event.data as { usage?: { cacheReadTokens?: number } }).usage)
      expect(usages.every((usage) => usage?.cacheReadTokens !== undefined)).toBe(true)
      run.assertClean()
    })
  },
)

/** The key as a CRLF env file or a mounted secret leaves it: trailing `\r\n` and spaces. */
const PADDED_KEY = `${SECRET_KEY}\r\n  `
/** Conversation request at which the server rejects the key (and echoes it), ending the turn. */
const FAILING_STEP = 24

/** Every form of the key a leak could take, raw and as JSON escapes it. */
function keyForms(): string[] {
  return [SECRET_KEY, PADDED_KEY, JSON.stringify(PADDED_KEY).slice(1, -1), 'SECRET']
}

/**
 * The real stack with a file store, a key with trailing whitespace, and a server that echoes the
 * Authorization header it received into every usage object, into its answer to every summary
 * call (a 400, so compaction fails) and finally into a 401 that ends the turn.
 */
async function runEchoingSession(
  keyConfig: { apiKeyEnv: string } | { apiKey: string },
): Promise<{ run: Run; directory: string; events: string }> {
  const directory = await mkdtemp(join(tmpdir(), 'warmfold-openai-key-'))
  folders.push(directory)
  let conversationCalls = 0
  const server = await RecordingServer.start((request, index) => {
    const echoed = String(request.headers.authorization)
    const usage = { ...usageFor(request, server.requests[index - 1]), note: `billed to ${echoed}` }
    if (isSummaryRequest(request))
      return {
        status: 400,
        body: { error: { message: `summary refused for ${echoed}`, type: 'invalid_request_error', code: null } },
      }
    const step = conversationCalls++
    if (step >= FAILING_STEP)
      return {
        status: 401,
        body: {
          error: {
            message: `Incorrect API key provided: ${echoed}.`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        },
      }
    return {
      sse: deepseekStream(
        MODEL,
        {
          reasoning: `Step ${step}.`,
          text: `Reading file ${step}.`,
          toolCalls: [{ id: `call_${step}`, name: 'read', arguments: `{"path": "src/file-${step}.ts"}` }],
        },
        usage,
      ),
    }
  })
  const context = await mountStack(server, { store: 'file', directory }, { ...keyConfig, maxRetries: 0 })
  const { ctx } = context
  let step = 0
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    execute: () => filler(2000 + step++, 1200),
  })
  const run: Run = Object.assign(context, { server, marks: [] as number[] })
  runs.push(run)
  const agent = await ctx.agentLoop.create('leak', { provider: 'deepseek', model: MODEL, system: SYSTEM, ...ENVELOPE })
  agent.followup('Refactor the project.')
  await agent.whenIdle()
  await ctx.stop()
  const files = await readdir(directory)
  const events = (await Promise.all(files.map((file) => readFile(join(directory, file), 'utf8')))).join('\n')
  return { run, directory, events }
}

describe('an API key with trailing whitespace never reaches the session files', () => {
  for (const [name, keyConfig] of [
    [
      'read from apiKeyEnv with a trailing CRLF and spaces',
      () => (vi.stubEnv(KEY_ENV, PADDED_KEY), { apiKeyEnv: KEY_ENV }),
    ],
    ['given as apiKey with surrounding whitespace', () => ({ apiKey: ` ${PADDED_KEY}` })],
  ] as const) {
    it(`${name}: turn/end, compaction/end, compaction/failure and usage.raw are redacted, and the trimmed key was sent`, async () => {
      const { run, events } = await runEchoingSession(keyConfig())
      for (const request of run.server.requests) expect(request.headers.authorization).toBe(`Bearer ${SECRET_KEY}`)
      const lines = events
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as { type: string; data: unknown })
      const ofType = (type: string) =>
        lines.filter((line) => line.type === type).map((line) => JSON.stringify(line.data))
      // Every path the echo could take was exercised, and each holds the redaction marker.
      expect(ofType('turn/end').at(-1)).toContain('"errorCode":"AUTH"')
      expect(ofType('turn/end').at(-1)).toContain('Incorrect API key provided: Bearer [redacted].')
      expect(ofType('compaction/end').some((data) => data.includes('summary refused for Bearer [redacted]'))).toBe(true)
      expect(ofType('compaction/failure').some((data) => data.includes('summary refused for Bearer [redacted]'))).toBe(
        true,
      )
      const usages = lines
        .filter((line) => line.type === 'assistant/message')
        .map((line) => JSON.stringify((line.data as { usage: { raw: unknown } }).usage.raw))
      expect(usages).toHaveLength(FAILING_STEP)
      for (const usage of usages) expect(usage).toContain('billed to Bearer [redacted]')
      const produced = [events, run.warnings.join('\n'), inspect(run.errors, { depth: Infinity })].join('\n')
      for (const form of keyForms()) expect(produced, `the key as ${JSON.stringify(form)}`).not.toContain(form)
    })
  }
})
