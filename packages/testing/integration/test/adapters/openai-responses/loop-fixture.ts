import type { Agent } from '@warmfold/agent-loop'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CompactionInvariants } from '@warmfold/compaction'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions } from '@warmfold/llm'
import { LlmRuntime } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import type { RecordedRequest, TestContext } from '@warmfold/test-utils'
import { createTestContext, RecordingServer } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import { OpenAIResponsesAdapter } from '@warmfold/llm-openai-responses'
import { streamReply } from '../../../../../llm/llm-openai-responses/test/sse-script.ts'

export const LOOP_MODEL = 'gpt-loop'
export const SUMMARY = 'Goal: refactor the project. Files: src/file-*.ts were read. Next: run the tests.'
export const SYSTEM = 'You are a coding agent.'
const ENVELOPE_KEYS = [
  'model',
  'instructions',
  'tools',
  'reasoning',
  'temperature',
  'store',
  'include',
  'prompt_cache_key',
  'prompt_cache_retention',
] as const

/** Simulated usage: the longest input-item prefix an earlier request with the same envelope already sent is read. */
export interface SimulatedUsage {
  input_tokens: number
  input_tokens_details: { cached_tokens: number }
}

/** One call: what the runtime handed the adapter, what reached the server, and its simulated usage. */
export interface Exchange {
  readonly call: GenerateOptions
  readonly request: RecordedRequest
  readonly usage: SimulatedUsage
}

export interface LoopHarness extends TestContext {
  readonly server: RecordingServer
  exchanges(): Exchange[]
  run(): Promise<Agent>
  dispose(): Promise<void>
}

/** Deterministic filler text for step `step`. */
export function filler(step: number, length: number): string {
  let text = ''
  let state = (step + 1) * 2654435761
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2147483648
    text += `${state.toString(36)} `
  }
  return text.slice(0, length)
}

/** Whether a request body is a summary call: its last item is the compaction instruction. */
export function isCompaction(body: any): boolean {
  const item = body?.input?.at(-1)
  return item?.type === 'message' && item.role === 'user' && item.content?.at(-1)?.text === COMPACTION_INSTRUCTION
}

const tokens = (text: string) => Math.ceil(text.length / 4)
const envelopeOf = (body: any) => JSON.stringify(ENVELOPE_KEYS.map((key) => body[key]))

/** A prefix cache keyed by envelope: tokens of the longest run of leading input items seen before. */
function cacheSimulator() {
  const seen: Array<{ envelope: string; items: string[] }> = []
  return (body: any): SimulatedUsage => {
    const items: string[] = body.input.map((item: unknown) => JSON.stringify(item))
    const envelope = envelopeOf(body)
    const head = tokens(envelope)
    let best = -1
    for (const earlier of seen) {
      if (earlier.envelope !== envelope) continue
      let common = 0
      while (common < items.length && common < earlier.items.length && items[common] === earlier.items[common])
        common += 1
      best = Math.max(best, common)
    }
    seen.push({ envelope, items })
    const total = head + items.reduce((sum, item) => sum + tokens(item), 0)
    const cached = best < 0 ? 0 : head + items.slice(0, best).reduce((sum, item) => sum + tokens(item), 0)
    return { input_tokens: total, input_tokens_details: { cached_tokens: cached } }
  }
}

/**
 * The whole stack against the recording server: runtime, session store, tool registry, agent
 * loop, token meter, compaction invariants, BasicCompactionEngine and `OpenAIResponsesAdapter`.
 * The model window is 8000 tokens, so a 30-step run compacts. Each step replies with a reasoning
 * item (encrypted), a message and a function call; summary calls get {@link SUMMARY}.
 */
export async function mountLoop(steps = 30): Promise<LoopHarness> {
  const simulate = cacheSimulator()
  const usages: SimulatedUsage[] = []
  let conversationIndex = 0
  const server = await RecordingServer.start((request) => {
    const usage = simulate(request.json)
    usages.push(usage)
    const reply = { ...usage, output_tokens: 60, output_tokens_details: { reasoning_tokens: 25 } }
    if (isCompaction(request.json)) {
      return streamReply({
        items: [
          { type: 'reasoning', id: 'rs_summary', summary: ['Condense it.'], encrypted: 'enc-summary' },
          { type: 'message', text: SUMMARY },
        ],
        usage: reply,
      })
    }
    const index = conversationIndex++
    if (index >= steps)
      return streamReply({
        items: [
          { type: 'reasoning', id: `rs_${index}`, summary: [], encrypted: `enc-${index}` },
          { type: 'message', text: 'All done.' },
        ],
        usage: reply,
      })
    return streamReply({
      items: [
        {
          type: 'reasoning',
          id: `rs_${index}`,
          summary: [`Step ${index}: the next file is src/file-${index}.ts.`],
          encrypted: `enc-${index}-${filler(index, 16).replaceAll(' ', '')}`,
        },
        { type: 'message', id: `msg_${index}`, text: `Step ${index}: reading the next file. ${filler(index, 80)}` },
        {
          type: 'function_call',
          id: `fc_${index}`,
          callId: `call_${String(index).padStart(3, '0')}`,
          name: 'read',
          arguments: `{"path": "src/file-${index}.ts", "limit": 200}`,
        },
      ],
      usage: reply,
    })
  })
  const context = await createTestContext()
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, {})
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(CompactionInvariants)
  ctx.plugin(BasicCompactionEngine, { maxTokens: 2000 })
  ctx.plugin(OpenAIResponsesAdapter, {
    baseURL: server.baseURL,
    apiKey: 'sk-proj-loop-key',
    models: {
      [LOOP_MODEL]: {
        contextWindow: 8000,
        defaultMaxTokens: 1500,
        efforts: ['low', 'high'],
        defaultEffort: 'low',
        cacheRetention: 'in_memory',
      },
    },
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
  const calls: GenerateOptions[] = []
  ctx.on('llm/stream', (call) => void calls.push(call))
  return Object.assign(context, {
    server,
    exchanges: () => calls.map((call, index) => ({ call, request: server.requests[index]!, usage: usages[index]! })),
    async run() {
      const agent = await ctx.agentLoop.create('session', {
        provider: 'openai',
        model: LOOP_MODEL,
        system: SYSTEM,
        reasoningEffort: 'high',
      })
      agent.followup('Refactor the project.')
      await agent.whenIdle()
      // A background fold whose summary arrived after the last request is swapped in while idle: wait for it.
      await (ctx.compaction as BasicCompactionEngine).whenFoldsSettle(agent.session)
      return agent
    },
    async dispose() {
      await ctx.stop()
      await server.close()
    },
  })
}

export { ENVELOPE_KEYS }
