import type { ForkScope } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import { CacheLedger } from '@warmfold/cache-ledger'
import { CompactionInvariants } from '@warmfold/compaction'
import { ToolResultPruner } from '@warmfold/compaction-tool-result-pruner'
import type { GenerateOptions, ModelInfo } from '@warmfold/llm'
import { canonicalJson, LlmRuntime, promptView, textBlock, toolCallBlock } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { SessionBackend } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import type { BasicCompactionConfig } from '../src/index.ts'
import { BasicCompactionEngine } from '../src/index.ts'

export const WINDOW = 8000
export const MODEL: ModelInfo = {
  contextWindow: WINDOW,
  defaultMaxTokens: 500,
  reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
}
export const OTHER_MODEL: ModelInfo = {
  contextWindow: 32000,
  defaultMaxTokens: 1000,
  reasoning: { efforts: ['low', 'high'], defaultEffort: 'low' },
}
/** A summarization model with a small window: each summary call can hold only a short head. */
export const SMALL_MODEL: ModelInfo = { contextWindow: 2400, defaultMaxTokens: 500 }
export const ROUTE = { provider: 'scripted', model: 'main' } as const
export const SUMMARY = 'Goal: fix the build. Files: src/a.ts. Next: run the tests.'

/** Deterministic filler without long repeated runs: `length` characters for step `step`. */
export function filler(step: number, length: number): string {
  let text = ''
  let state = (step + 1) * 2654435761
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2147483648
    text += `${state.toString(36)} `
  }
  return text.slice(0, length)
}

export interface EngineHarness extends TestContext {
  adapter: ScriptedAdapter
  /** The engine's plugin scope: dispose it to unload the engine. */
  engineScope: ForkScope
  /** Every request the adapter saw, in order. */
  requests: GenerateOptions[]
  conversation(): GenerateOptions[]
  summaries(): GenerateOptions[]
}

export interface EngineHarnessOptions {
  engine?: BasicCompactionConfig
  /** Pruner config, or false for no pruner. Default: no pruner. */
  pruner?: { thresholdChars: number; headChars: number; tailChars: number } | false
  /** Conversation replies; default: a tool call per step with `resultChars` results, forever. */
  conversation?: (request: GenerateOptions, index: number) => ScriptedReply | Promise<ScriptedReply>
  /** Summary replies; default: {@link SUMMARY}. */
  summary?: (request: GenerateOptions, index: number) => ScriptedReply | Promise<ScriptedReply>
  /** Characters of each tool result; default 1200 (about 300 tokens). */
  resultChars?: number | ((step: number) => number)
  /** A JSONL file store in this folder instead of the in-memory store. */
  directory?: string
  /** A session backend (e.g. an SQLite store) instead of the in-memory store; exclusive with `directory`. */
  store?: SessionBackend
  /** Mount the token meter; default true. */
  tokenMeter?: boolean
  /** Mount the cache ledger with this config; default: no ledger. */
  ledger?: Partial<CacheLedger.Config>
  /** `ModelInfo.cacheTtlMs` of the `main` model; default: none. */
  cacheTtlMs?: number
  /** Reasoning controls of the `main` model instead of {@link MODEL}'s (e.g. with `outputReserveTokens`). */
  reasoning?: ModelInfo['reasoning']
  /** The engine class; default `BasicCompactionEngine`. */
  engineClass?: typeof BasicCompactionEngine
  /**
   * Mount the engine with `engine` alone, its defaults for everything else; by default the
   * fixture turns the artifact trail and kept user messages off first.
   */
  engineDefaults?: boolean
}

/** Real runtime, store, loop, tools, meter, invariants, pruner and engine; only the model's content is scripted. */
export async function mountEngine(options: EngineHarnessOptions = {}): Promise<EngineHarness> {
  const context = await createTestContext()
  const { ctx } = context
  ctx.plugin(LlmRuntime)
  ctx.plugin(
    SessionStore,
    options.store ? { store: options.store } : options.directory ? { store: 'file', directory: options.directory } : {},
  )
  if (options.ledger) ctx.plugin(CacheLedger, options.ledger)
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  if (options.tokenMeter !== false) ctx.plugin(TokenMeter, {})
  ctx.plugin(CompactionInvariants)
  if (options.pruner) ctx.plugin(ToolResultPruner, options.pruner)
  // The tests here were sized for checkpoints without the artifact trail (about 1,000 tokens at
  // an 8,000-token window would move every fold) and for folds that shadow their whole region
  // (kept user messages would move the regions and sizes they assert): both are off unless a test
  // turns them on, or asks for the engine's defaults. The audit keeps its default (on), so the
  // invariant checker sees a compaction/audit in every fold.
  const engineScope = ctx.plugin(
    options.engineClass ?? BasicCompactionEngine,
    options.engineDefaults
      ? (options.engine ?? {})
      : { artifactTrail: { enabled: false }, keepUserMessages: false, ...options.engine },
  )
  let conversationCalls = 0
  let summaryCalls = 0
  const adapter = new ScriptedAdapter({
    models: {
      main: {
        ...MODEL,
        ...(options.cacheTtlMs === undefined ? {} : { cacheTtlMs: options.cacheTtlMs }),
        ...(options.reasoning ? { reasoning: options.reasoning } : {}),
      },
      other: OTHER_MODEL,
      small: SMALL_MODEL,
    },
    responses: (request) => {
      if (request.purpose === 'compaction')
        return options.summary ? options.summary(request, summaryCalls++) : { content: SUMMARY }
      const index = conversationCalls++
      if (options.conversation) return options.conversation(request, index)
      return {
        content: [
          textBlock(`Step ${index}: reading the next file. ${filler(index, 80)}`),
          toolCallBlock(`call-${index}`, 'read', `{"path":"src/file-${index}.ts"}`),
        ],
      }
    },
  })
  ctx.llm.registerAdapter('scripted', adapter)
  let step = 0
  ctx.tools.register({
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    execute: () => {
      const length =
        typeof options.resultChars === 'function' ? options.resultChars(step) : (options.resultChars ?? 1200)
      return filler(1000 + step++, length)
    },
  })
  ctx.tools.register({
    name: 'write',
    description: 'Write a file',
    parameters: { type: 'object' },
    execute: () => 'ok',
  })
  const requests: GenerateOptions[] = []
  ctx.on('llm/stream', (request) => void requests.push(request))
  return Object.assign(context, {
    adapter,
    engineScope,
    requests,
    conversation: () => requests.filter((request) => request.purpose === 'conversation'),
    summaries: () => requests.filter((request) => request.purpose === 'compaction'),
  })
}

/** The prompt elements of a request: system, tools, then each message, canonical. */
export function elements(request: GenerateOptions): string[] {
  return [
    canonicalJson(request.system ?? null),
    canonicalJson(request.tools ?? []),
    ...request.messages.map((message) => canonicalJson(promptView(message))),
  ]
}

/** The conversation request sent right before `summary`. */
export function conversationBefore(harness: EngineHarness, summary: GenerateOptions): GenerateOptions {
  const index = harness.requests.indexOf(summary)
  const before = harness.requests.slice(0, index).filter((request) => request.purpose === 'conversation')
  const last = before.at(-1)
  if (!last) throw new Error('no conversation request before the summary call')
  return last
}

/** Runs one turn of `steps` tool steps then a final answer, through the real loop. */
export async function runAgent(
  harness: EngineHarness,
  options: Partial<Parameters<EngineHarness['ctx']['agentLoop']['create']>[1]> = {},
  sessionId = 'session',
) {
  const agent = await harness.ctx.agentLoop.create(sessionId, {
    ...ROUTE,
    system: 'You are a coding agent.',
    ...options,
  })
  agent.followup('Refactor the project.')
  await agent.whenIdle()
  return agent
}

/** Conversation replies: `steps` tool calls, then a final answer. */
export function stopAfter(steps: number): (request: GenerateOptions, index: number) => ScriptedReply {
  return (_request, index) =>
    index >= steps
      ? { content: 'All done.' }
      : {
          content: [
            textBlock(`Step ${index}: reading. ${filler(index, 80)}`),
            toolCallBlock(`call-${index}`, 'read', `{"path":"src/file-${index}.ts"}`),
          ],
        }
}

/** Conversation replies for one tool step per turn: even calls read a file, odd calls answer. */
export function oneToolStepPerTurn(request: GenerateOptions, index: number): ScriptedReply {
  void request
  return index % 2 === 1
    ? { content: `Done with step ${index}.` }
    : {
        content: [
          textBlock(`Reading. ${filler(index, 60)}`),
          toolCallBlock(`call-${index}`, 'read', `{"path":"src/${index}.ts"}`),
        ],
      }
}

/** Runs one-step turns on `agent` until `until()` holds (at most `limit` turns). */
export async function growUntil(
  agent: { followup(text: string): void; whenIdle(): Promise<void> },
  until: () => boolean,
  limit = 200,
): Promise<number> {
  let turns = 0
  while (!until()) {
    if (++turns > limit) throw new Error(`growUntil: condition not reached after ${limit} turns`)
    agent.followup(`Continue (${turns}).`)
    await agent.whenIdle()
  }
  return turns
}
