import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CompactionInvariants } from '@warmfold/compaction'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import { LlmRuntime } from '@warmfold/llm'
import type { Session } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { RecordedRequest, Reply, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import { afterEach, describe, expect, it } from 'vitest'
import { AiSdkAdapter } from '@warmfold/llm-ai-sdk'
import type { Kind } from '../../../../../llm/llm-ai-sdk/test/fixture.ts'
import { modelConfig, modelFor, TEST_KEY, WIRE_MODEL } from '../../../../../llm/llm-ai-sdk/test/fixture.ts'
import { anthropicStream, chatStream } from '../../../../../llm/llm-ai-sdk/test/sse.ts'

const STEPS = 30
const SYSTEM = 'You are a coding agent.'
const SUMMARY = 'Goal: refactor the project. Files: src/file-0.ts to src/file-29.ts were read. Next: run the tests.'

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

/** A copy without Anthropic's cache markers: the prompt bytes a prefix cache compares. */
function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'cache_control')
      .map(([key, item]) => [key, strip(item)]),
  )
}

const json = (value: unknown) => JSON.stringify(strip(value))

function isSummary(kind: Kind, request: RecordedRequest): boolean {
  const last = request.json.messages.at(-1)
  if (kind === 'compat') return last?.role === 'user' && last.content === COMPACTION_INSTRUCTION
  return (
    last?.role === 'user' && last.content.at(-1)?.type === 'text' && last.content.at(-1).text === COMPACTION_INSTRUCTION
  )
}

/** Prompt usage as a prefix cache would report it: the bytes shared with the previous request are hits. */
function usageFor(
  kind: Kind,
  request: RecordedRequest,
  previous: RecordedRequest | undefined,
): Record<string, unknown> {
  let shared = 0
  const before = previous?.body ?? ''
  while (shared < before.length && shared < request.body.length && before[shared] === request.body[shared]) shared++
  const prompt = Math.ceil(request.body.length / 4)
  const hit = Math.min(prompt, Math.floor(shared / 4))
  if (kind === 'compat')
    return {
      prompt_tokens: prompt,
      completion_tokens: 40,
      total_tokens: prompt + 40,
      prompt_tokens_details: { cached_tokens: hit },
    }
  return {
    input_tokens: 3,
    cache_read_input_tokens: hit,
    cache_creation_input_tokens: prompt - hit - 3,
    output_tokens: 1,
  }
}

interface Turn {
  readonly reasoning: string
  readonly text: string
  readonly call?: { readonly id: string; readonly arguments: string }
}

function reply(kind: Kind, turn: Turn, usage: Record<string, unknown>, step: number): Reply {
  if (kind === 'compat') {
    return {
      sse: chatStream(
        WIRE_MODEL.compat,
        { reasoning: turn.reasoning, text: turn.text, toolCalls: turn.call ? [{ ...turn.call, name: 'read' }] : [] },
        usage,
      ),
    }
  }
  const blocks = [
    { type: 'thinking' as const, thinking: turn.reasoning, signature: `sig-${step}-${turn.text.length}` },
    { type: 'text' as const, text: turn.text },
    ...(turn.call ? [{ type: 'tool_use' as const, id: turn.call.id, name: 'read', json: turn.call.arguments }] : []),
  ]
  return {
    sse: anthropicStream({
      blocks,
      stopReason: turn.call ? 'tool_use' : 'end_turn',
      startUsage: usage,
      deltaUsage: { output_tokens: 40 },
    }),
    done: false,
  }
}

interface Run extends TestContext {
  readonly server: RecordingServer
}

const runs: Run[] = []
afterEach(async () => {
  for (const run of runs.splice(0)) {
    await run.dispose()
    await run.server.close()
  }
})

/** The real runtime, store, loop, tools, meter, invariants and engine; the AI SDK provider talks HTTP to the recording server. */
async function runSession(kind: Kind): Promise<{ run: Run; session: Session }> {
  let conversationCalls = 0
  const server: RecordingServer = await RecordingServer.start((request, index) => {
    const usage = usageFor(kind, request, server.requests[index - 1])
    if (isSummary(kind, request))
      return reply(kind, { reasoning: 'Condensing the session.', text: SUMMARY }, usage, index)
    const step = conversationCalls++
    if (step >= STEPS) return reply(kind, { reasoning: 'Everything is read.', text: 'All done.' }, usage, index)
    // A space after the colon: the raw argument string must reach the model as it wrote it.
    return reply(
      kind,
      {
        reasoning: `Step ${step}: read src/file-${step}.ts next.`,
        text: `Reading file ${step}.`,
        call: { id: `call_${step}`, arguments: `{"path": "src/file-${step}.ts"}` },
      },
      usage,
      index,
    )
  })
  const context = await createTestContext()
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(CompactionInvariants)
  ctx.plugin(BasicCompactionEngine, {})
  // Anthropic: maxTokens includes the 1024-token thinking budget, so 500 tokens are left for the answer as on the compat route.
  ctx.plugin(AiSdkAdapter, {
    provider: 'ai',
    models: {
      main: modelConfig(kind, modelFor(kind, server), {
        contextWindow: 8000,
        defaultMaxTokens: kind === 'anthropic' ? 1524 : 500,
        defaultEffort: 'high',
      }),
    },
    redact: [TEST_KEY],
    retryBaseMs: 1,
  })
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
  const run: Run = Object.assign(context, { server })
  runs.push(run)
  const agent = await ctx.agentLoop.create('session', {
    provider: 'ai',
    model: 'main',
    system: SYSTEM,
    stop: ['<halt>'],
  })
  agent.followup('Refactor the project.')
  await agent.whenIdle()
  // A background fold whose summary arrived after the last request is swapped in while idle: wait for it.
  await (ctx.compaction as BasicCompactionEngine).whenFoldsSettle(agent.session)
  return { run, session: agent.session }
}

// A whole session over HTTP: about 3 s alone, more on a loaded machine, so not the default 5 s.
describe.each(['compat', 'anthropic'] as const)(
  'through the real agent loop and BasicCompactionEngine (%s provider)',
  { timeout: 30_000 },
  (kind) => {
    it('keeps conversation requests append-only, and each summary request the previous request as a prefix plus only the instruction', async () => {
      const { run, session } = await runSession(kind)
      const { server } = run
      // The last turn/end: a background fold may be swapped in after it, while the agent is idle.
      expect(session.events.findLast((event) => event.type === 'turn/end')).toMatchObject({ data: { reason: 'stop' } })
      const summaries = server.where((request) => isSummary(kind, request))
      expect(summaries.length, 'a compaction happened').toBeGreaterThanOrEqual(1)
      expect(session.events.filter((event) => event.type === 'compaction/summary')).toHaveLength(summaries.length)

      // C1: each conversation request extends the previous one (cache markers aside), except where
      // a summary was swapped in: a background fold sends its summary beside the conversation and
      // swaps the checkpoint in at a later request boundary, so a rewrite follows a summary, not
      // necessarily at once.
      let previous: RecordedRequest | undefined
      let extended = 0
      let pending = 0
      let rewrites = 0
      for (const request of server.requests) {
        if (isSummary(kind, request)) {
          pending++
          continue
        }
        if (previous) {
          const { messages, ...envelope } = request.json
          const { messages: before, ...beforeEnvelope } = previous.json
          expect(json(envelope)).toBe(json(beforeEnvelope))
          const appended =
            messages.length > before.length &&
            before.every((message: unknown, position: number) => json(messages[position]) === json(message))
          if (appended) extended++
          else {
            expect(pending, 'a conversation request rewrote history without a summary to swap in').toBeGreaterThan(0)
            expect(json(messages.find((message: { role: string }) => message.role !== 'system'))).toContain(
              'compacted-summary',
            )
            pending--
            rewrites++
          }
        }
        previous = request
      }
      // A background summary that arrived after the last request is swapped in while the agent is idle: no request shows it.
      expect(pending).toBeLessThanOrEqual(1)
      expect(rewrites + pending).toBe(summaries.length)
      expect(extended).toBeGreaterThan(20)

      // C2 + C3: the summary request is the previous conversation request's body as a prefix, then only the instruction.
      for (const summary of summaries) {
        const index = server.requests.indexOf(summary)
        const conversation = server.requests
          .slice(0, index)
          .filter((request) => !isSummary(kind, request))
          .at(-1)!.json
        const { messages, max_tokens: _a, ...envelope } = summary.json
        const { messages: conversationMessages, max_tokens: _b, ...conversationEnvelope } = conversation
        expect(json(envelope)).toBe(json(conversationEnvelope))
        const last = messages.at(-1)
        if (kind === 'compat') {
          expect(last).toEqual({ role: 'user', content: COMPACTION_INSTRUCTION })
          messages
            .slice(0, -1)
            .forEach((message: unknown, position: number) =>
              expect(json(message), `summary message ${position}`).toBe(json(conversationMessages[position])),
            )
        } else {
          // The region ends with a tool result, so the instruction merges into that user turn as its last block,
          // without a breakpoint: the breakpoint sits on the replayed region's end, the tool result.
          expect(last.content.at(-1)).toEqual({ type: 'text', text: COMPACTION_INSTRUCTION })
          expect(last.content.at(-2).cache_control).toEqual({ type: 'ephemeral' })
          const replayed = [...messages.slice(0, -1), { ...last, content: last.content.slice(0, -1) }]
          replayed.forEach((message: unknown, position: number) =>
            expect(json(message), `summary message ${position}`).toBe(json(conversationMessages[position])),
          )
          expect(summary.body.split('"cache_control"')).toHaveLength(3)
        }
      }

      // The raw argument string reaches the wire as the model wrote it.
      expect(server.requests[2]!.body).toContain(
        kind === 'compat'
          ? String.raw`"arguments":"{\"path\": \"src/file-0.ts\"}"`
          : '"input":{"path":"src/file-0.ts"}',
      )
      if (kind === 'anthropic') {
        // Thinking is replayed with the signature it streamed with.
        const assistant = server.requests[2]!.json.messages[1]
        expect(assistant.content[0]).toEqual({
          type: 'thinking',
          thinking: 'Step 0: read src/file-0.ts next.',
          signature: 'sig-0-15',
        })
      }
      run.assertClean()
    })
  },
)
