import { randomBytes } from 'node:crypto'
import type { Agent } from '@warmfold/agent-loop'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CompactionInvariants } from '@warmfold/compaction'
import type { BasicCompactionConfig } from '@warmfold/compaction-basic'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION } from '@warmfold/compaction-basic'
import type { GenerateOptions } from '@warmfold/llm'
import { LlmRuntime } from '@warmfold/llm'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import type { AnthropicModelConfig } from '@warmfold/llm-anthropic'
import { AnthropicAdapter } from '@warmfold/llm-anthropic'
import type {
  AnthropicTestServer,
  RecordedRequest,
  ServerReply,
} from '../../../../../llm/llm-anthropic/test/anthropic-test-server.ts'
import { startAnthropicServer } from '../../../../../llm/llm-anthropic/test/anthropic-test-server.ts'
import type { SimulatedUsage } from '../../../../../llm/llm-anthropic/test/prompt-cache-simulator.ts'
import {
  PromptCacheSimulator,
  stripCacheControl,
} from '../../../../../llm/llm-anthropic/test/prompt-cache-simulator.ts'
import { streamReply } from '../../../../../llm/llm-anthropic/test/sse-script.ts'

export const LOOP_MODEL = 'claude-loop'
export const SUMMARY = 'Goal: refactor the project. Files: src/file-*.ts were read. Next: run the tests.'
export const SYSTEM = 'You are a coding agent.'

/** One call: what the runtime handed the adapter, what reached the server, and its simulated usage. */
export interface Exchange {
  readonly call: GenerateOptions
  readonly request: RecordedRequest
  readonly usage: SimulatedUsage
}

export interface LoopHarness extends TestContext {
  readonly server: AnthropicTestServer
  /** The API key the adapter read from its environment variable. */
  readonly apiKey: string
  /** Every call in order, paired with its HTTP request. */
  exchanges(): Exchange[]
  run(): Promise<Agent>
  dispose(): Promise<void>
}

export interface LoopOptions {
  /** Tool steps before the final answer; default 30. */
  readonly steps?: number
  /** Characters of each tool result; default 1200 (about 300 tokens). */
  readonly resultChars?: number
  /** Replaces the reply to conversation request `index`. */
  readonly override?: (index: number) => ServerReply | undefined
  /** Replaces the reply to a summary request. */
  readonly summaryOverride?: (request: RecordedRequest) => ServerReply | undefined
  /** Extra fields the server adds to every usage it reports (e.g. an echo of a request header). */
  readonly usageExtra?: (request: RecordedRequest) => Record<string, unknown>
  /** Appended to the key in the environment variable (the adapter must trim it). */
  readonly apiKeyPadding?: string
  /** Folder of a real file store; default the memory store. */
  readonly directory?: string
  /** The engine's config; default `{ maxTokens: 2000 }`. */
  readonly engine?: BasicCompactionConfig
  /** The model entry; default an 8000-token window, efforts off and high, default off. */
  readonly model?: AnthropicModelConfig
  /** The adapter's `thinkingBudgets`; default `{ high: 1024 }`. `null`: the adapter's defaults. */
  readonly thinkingBudgets?: Record<string, number> | null
  /** The conversation's effort; default `high`. */
  readonly effort?: string
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

/** Whether a request body is a summary call: its last block is the compaction instruction. */
export function isCompaction(body: any): boolean {
  const block = body?.messages?.at(-1)?.content?.at(-1)
  return block?.type === 'text' && block.text === COMPACTION_INSTRUCTION
}

/** Each message of a body as JSON with the cache_control markers removed. */
export function strippedMessages(body: any): string[] {
  return body.messages.map((message: unknown) => JSON.stringify(stripCacheControl(message)))
}

/** Paths (`system[0]`, `messages[3].content[1]`, …) of every block carrying cache_control. */
export function breakpointPaths(body: any): string[] {
  const paths: string[] = []
  body.tools?.forEach((tool: any, index: number) => tool.cache_control && paths.push(`tools[${index}]`))
  body.system?.forEach((block: any, index: number) => block.cache_control && paths.push(`system[${index}]`))
  body.messages.forEach((message: any, index: number) =>
    message.content.forEach(
      (block: any, inner: number) => block.cache_control && paths.push(`messages[${index}].content[${inner}]`),
    ),
  )
  return paths
}

/**
 * The whole stack against the recording server: runtime, session store, tool registry, agent
 * loop, token meter, compaction invariants, BasicCompactionEngine and `AnthropicAdapter` (key
 * from a fresh environment variable). The model window is 8000 tokens, so a 30-step run
 * compacts. The server scripts thinking + text + one `read` call per step, then a final answer,
 * and answers summary calls (recognised by the trailing instruction) with {@link SUMMARY}.
 */
export async function mountLoop(options: LoopOptions = {}): Promise<LoopHarness> {
  const steps = options.steps ?? 30
  const apiKey = `sk-ant-api03-${randomBytes(24).toString('hex')}`
  const apiKeyEnv = `WARMFOLD_TEST_ANTHROPIC_KEY_${randomBytes(4).toString('hex').toUpperCase()}`
  process.env[apiKeyEnv] = apiKey + (options.apiKeyPadding ?? '')
  const cache = new PromptCacheSimulator()
  const usages: SimulatedUsage[] = []
  let conversationIndex = 0
  const server = await startAnthropicServer((request) => {
    const usage = cache.usageFor(request.body)
    usages.push(usage)
    const startUsage = { ...usage, output_tokens: 1, ...options.usageExtra?.(request) }
    if (isCompaction(request.body)) {
      const summaryOverride = options.summaryOverride?.(request)
      if (summaryOverride) return summaryOverride
      return streamReply({
        blocks: [
          { type: 'thinking', thinking: 'Condense it.', signature: 'sig-summary' },
          { type: 'text', text: SUMMARY },
        ],
        startUsage,
        deltaUsage: { output_tokens: 90 },
      })
    }
    const index = conversationIndex++
    const override = options.override?.(index)
    if (override) return override
    if (index >= steps) {
      return streamReply({
        blocks: [
          { type: 'thinking', thinking: 'Everything is read.', signature: `sig-${index}` },
          { type: 'text', text: 'All done.' },
        ],
        startUsage,
        deltaUsage: { output_tokens: 20 },
      })
    }
    return streamReply({
      blocks: [
        {
          type: 'thinking',
          thinking: `Step ${index}: the next file to read is src/file-${index}.ts.`,
          signature: `sig-${index}-${filler(index, 16).replaceAll(' ', '')}`,
        },
        { type: 'text', text: `Step ${index}: reading the next file. ${filler(index, 80)}` },
        {
          type: 'tool_use',
          id: `toolu_${String(index).padStart(3, '0')}`,
          name: 'read',
          json: `{"path": "src/file-${index}.ts", "limit": 200}`,
        },
      ],
      stopReason: 'tool_use',
      startUsage,
      deltaUsage: { output_tokens: 60, output_tokens_details: { thinking_tokens: 25 } },
    })
  })
  const context = await createTestContext()
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, options.directory === undefined ? {} : { store: 'file', directory: options.directory })
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  ctx.plugin(CompactionInvariants)
  ctx.plugin(BasicCompactionEngine, options.engine ?? { maxTokens: 2000 })
  const thinkingBudgets = options.thinkingBudgets === undefined ? { high: 1024 } : options.thinkingBudgets
  ctx.plugin(AnthropicAdapter, {
    baseURL: server.url,
    apiKeyEnv,
    models: {
      [LOOP_MODEL]: options.model ?? {
        contextWindow: 8000,
        defaultMaxTokens: 1500,
        efforts: ['off', 'high'],
        defaultEffort: 'off',
      },
    },
    ...(thinkingBudgets === null ? {} : { thinkingBudgets }),
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
    execute: () => filler(1000 + step++, options.resultChars ?? 1200),
  })
  ctx.tools.register({
    name: 'write',
    description: 'Write a file',
    parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } },
    execute: () => 'ok',
  })
  const calls: GenerateOptions[] = []
  ctx.on('llm/stream', (call) => void calls.push(call))
  return Object.assign(context, {
    server,
    apiKey,
    exchanges: () => calls.map((call, index) => ({ call, request: server.requests[index]!, usage: usages[index]! })),
    async run() {
      const agent = await ctx.agentLoop.create('session', {
        provider: 'anthropic',
        model: LOOP_MODEL,
        system: SYSTEM,
        reasoningEffort: options.effort ?? 'high',
        stop: ['<halt>'],
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
      delete process.env[apiKeyEnv]
    },
  })
}
