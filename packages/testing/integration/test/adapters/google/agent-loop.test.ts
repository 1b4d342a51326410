import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CompactionInvariants } from '@warmfold/compaction'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { LlmRuntime } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import type { RecordedRequest } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { GoogleAdapter } from '@warmfold/llm-google'
import { TEST_KEY } from '../../../../../llm/llm-google/test/fixture.ts'
import { geminiReply } from '../../../../../llm/llm-google/test/gemini-stream.ts'

const MODEL = 'gemini-3-flash-preview'
const STEPS = 30
const SYSTEM = 'You are a coding agent.'
const SUMMARY = 'Goal: refactor the project. Files: src/file-*.ts were read. Next: run the tests.'
const KEY_ENV = 'WARMFOLD_TEST_GEMINI_KEY'

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
  const part = request.json.contents.at(-1)?.parts.at(-1)
  return part?.text === COMPACTION_INSTRUCTION
}

/** Implicit caching as a byte-prefix cache would report it: what the request shares with the previous one. */
function usageFor(request: RecordedRequest, previous: RecordedRequest | undefined) {
  let shared = 0
  const before = previous?.body ?? ''
  while (shared < before.length && shared < request.body.length && before[shared] === request.body[shared]) shared++
  const prompt = Math.ceil(request.body.length / 4)
  return {
    promptTokenCount: prompt,
    cachedContentTokenCount: Math.floor(shared / 4),
    candidatesTokenCount: 40,
    thoughtsTokenCount: 12,
    totalTokenCount: prompt + 52,
  }
}

/** The (role, part) pairs of a body's contents, each as JSON: merging turns does not hide a changed part. */
function flatParts(body: any): string[] {
  return body.contents.flatMap((content: { role: string; parts: unknown[] }) =>
    content.parts.map((part) => JSON.stringify([content.role, part])),
  )
}

const servers: RecordingServer[] = []
const disposers: Array<() => Promise<void>> = []
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const dispose of disposers.splice(0)) await dispose()
  for (const server of servers.splice(0)) await server.close()
})

async function runSession() {
  vi.stubEnv(KEY_ENV, TEST_KEY)
  let conversationCalls = 0
  const server: RecordingServer = await RecordingServer.start((request, index) => {
    const usage = usageFor(request, server.requests[index - 1])
    if (isSummaryRequest(request))
      return geminiReply({
        parts: [
          { text: 'Condensing.', thought: true },
          { text: SUMMARY, thoughtSignature: 'c3VtbWFyeQ==' },
        ],
        usage,
      })
    const step = conversationCalls++
    if (step >= STEPS)
      return geminiReply({ parts: [{ text: 'Everything is read.', thought: true }, { text: 'All done.' }], usage })
    return geminiReply({
      parts: [
        { text: `Step ${step}: the next file is src/file-${step}.ts.`, thought: true },
        { text: `Reading file ${step}.` },
        {
          functionCall: { id: `fc-${step}`, name: 'read', args: { path: `src/file-${step}.ts`, limit: 200 } },
          thoughtSignature: `c2ln-${step}`,
        },
      ],
      usage,
    })
  })
  servers.push(server)
  const context = await createTestContext()
  disposers.push(() => context.dispose())
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(CompactionInvariants)
  ctx.plugin(BasicCompactionEngine, {})
  ctx.plugin(GoogleAdapter, {
    baseURL: server.origin,
    apiKeyEnv: KEY_ENV,
    models: { [MODEL]: { contextWindow: 8000, defaultMaxTokens: 500, defaultEffort: 'high' } },
    retryBaseMs: 1,
  })
  let step = 0
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, limit: { type: 'number' } },
      required: ['path'],
    },
    execute: () => filler(1000 + step++, 1200),
  })
  ctx.tools.register({
    name: 'write',
    description: 'Write a file',
    parameters: { type: 'object' },
    execute: () => 'ok',
  })
  const marks: number[] = []
  const agent = await ctx.agentLoop.create('session', {
    provider: 'google',
    model: MODEL,
    system: SYSTEM,
    temperature: 0.3,
    stop: ['<halt>'],
  })
  ctx.on('llm/stream', () => void marks.push(agent.session.events.length))
  agent.followup('Refactor the project.')
  await agent.whenIdle()
  return { server, session: agent.session, marks, context }
}

const json = (value: unknown) => JSON.stringify(value)

// A whole session over HTTP: a few seconds alone, more on a loaded machine, so not the default 5 s.
describe('through the real agent loop and BasicCompactionEngine (Gemini 3, effort high)', { timeout: 30_000 }, () => {
  it('keeps conversation requests append-only on the wire, and each summary request the previous prefix plus only the instruction', async () => {
    const { server, session, marks, context } = await runSession()
    expect(session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'stop' } })
    expect(marks).toHaveLength(server.requests.length)
    const summaries = server.where(isSummaryRequest)
    expect(summaries.length, 'a compaction happened').toBeGreaterThanOrEqual(1)

    for (const request of server.requests) {
      expect(request.url).toBe(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`)
      expect(request.json.generationConfig).toMatchObject({
        temperature: 0.3,
        stopSequences: ['<halt>'],
        thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' },
      })
      expect(request.json.tools[0].functionDeclarations.map((tool: { name: string }) => tool.name)).toEqual([
        'read',
        'write',
      ])
      expect(request.json.systemInstruction).toEqual({ parts: [{ text: SYSTEM }] })
    }

    // C1: every conversation request keeps the earlier parts byte-identical unless a rewrite was logged.
    let previous: number | undefined
    let extended = 0
    let rewritten = 0
    for (const [index, request] of server.requests.entries()) {
      if (isSummaryRequest(request)) continue
      if (previous !== undefined) {
        const before = server.requests[previous]!.json
        const { contents, ...envelope } = request.json
        const { contents: _before, ...beforeEnvelope } = before
        expect(json(envelope), `request ${index}: envelope`).toBe(json(beforeEnvelope))
        const rewrites = session.events
          .slice(marks[previous], marks[index])
          .filter((event) => event.type === 'compaction/summary' || event.type === 'compaction/prune')
        if (rewrites.length === 0) {
          const parts = flatParts(request.json)
          flatParts(before).forEach((part, position) =>
            expect(parts[position], `request ${index}, part ${position}`).toBe(part),
          )
          expect(contents.length).toBe(before.contents.length + 2)
          // The implicit cache reads the whole previous request back.
          extended++
        } else {
          rewritten++
        }
      }
      previous = index
    }
    expect(extended).toBeGreaterThan(20)
    expect(rewritten).toBeGreaterThanOrEqual(1)

    // C2 + C3: the summary request is the previous conversation request's envelope, byte for byte
    // (only maxOutputTokens may differ), and a prefix of its parts followed by only the instruction.
    for (const summary of summaries) {
      const index = server.requests.indexOf(summary)
      const conversation = server.requests
        .slice(0, index)
        .filter((request) => !isSummaryRequest(request))
        .at(-1)!.json
      const {
        contents,
        generationConfig: { maxOutputTokens: _a, ...config },
        ...envelope
      } = summary.json
      const {
        contents: conversationContents,
        generationConfig: { maxOutputTokens: _b, ...conversationConfig },
        ...conversationEnvelope
      } = conversation
      expect(json(envelope)).toBe(json(conversationEnvelope))
      expect(json(config)).toBe(json(conversationConfig))
      const parts = flatParts(summary.json)
      const before = flatParts(conversation)
      // The region, or the whole last request when the region is its prefix (a read of all it cached).
      expect(parts.length - 1).toBeLessThanOrEqual(before.length)
      parts.slice(0, -1).forEach((part, position) => expect(part, `summary part ${position}`).toBe(before[position]))
      expect(parts.at(-1)).toBe(json(['user', { text: COMPACTION_INSTRUCTION }]))
      // Whole turns are replayed as they were sent, except the last, which gained the instruction.
      contents
        .slice(0, -1)
        .forEach((content: unknown, position: number) =>
          expect(json(content)).toBe(json(conversationContents[position])),
        )
      expect(contents.length).toBeLessThanOrEqual(conversationContents.length)
    }

    // Thought signatures went back on the function call parts they came with, ids on call and response.
    const replayed = server.requests[2]!.json.contents
    expect(replayed[1]).toEqual({
      parts: [
        { text: 'Step 0: the next file is src/file-0.ts.', thought: true },
        { text: 'Reading file 0.' },
        {
          functionCall: { args: { path: 'src/file-0.ts', limit: 200 }, id: 'fc-0', name: 'read' },
          thoughtSignature: 'c2ln-0',
        },
      ],
      role: 'model',
    })
    expect(replayed[2].parts[0].functionResponse).toMatchObject({
      id: 'fc-0',
      name: 'read',
      response: { output: expect.any(String) },
    })

    // Usage as logged: the shared prefix is a cache read, the rest uncached, thoughts in the output.
    const logged = session.events.flatMap((event) =>
      event.type === 'assistant/message' ? [(event.data as { usage: any }).usage] : [],
    )
    expect(logged.length).toBeGreaterThan(STEPS)
    for (const usage of logged) {
      expect(usage).toMatchObject({
        outputTokens: 52,
        reasoningTokens: 12,
        raw: { promptTokenCount: expect.any(Number) },
      })
      expect(usage.inputTokens + usage.cacheReadTokens).toBe(usage.raw.promptTokenCount)
    }
    expect(logged.slice(1).some((usage) => usage.cacheReadTokens > usage.inputTokens)).toBe(true)

    for (const request of server.requests) expect(request.headers['x-goog-api-key']).toBe(TEST_KEY)
    expect(JSON.stringify(session.events)).not.toContain(TEST_KEY)
    context.assertClean()
  })
})
