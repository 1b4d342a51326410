import type { GenerateOptions, GenerateResult, Message, ModelInfo, TokenUsage, ToolDefinition } from '@warmfold/llm'
import {
  createAssistantMessage,
  createToolResultMessage,
  createUserMessage,
  LlmRuntime,
  textBlock,
  toolCallBlock,
} from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import { ScriptedAdapter } from '@warmfold/llm/testing'
import type { Session } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { TestContext } from '@warmfold/test-utils'
import { createTestContext } from '@warmfold/test-utils'
import type { CacheGuardData, CacheObservationData } from '../src/index.ts'
import { CacheLedger } from '../src/index.ts'

export const MODEL: ModelInfo = {
  contextWindow: 128000,
  defaultMaxTokens: 1000,
  reasoning: { efforts: ['low', 'high', 'max'], defaultEffort: 'high' },
}
export const TOOLS: readonly ToolDefinition[] = Object.freeze([
  Object.freeze({
    name: 'read',
    description: 'Read a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  }),
  Object.freeze({
    name: 'write',
    description: 'Write a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } },
  }),
])
export const SYSTEM = 'You are a careful coding agent.'
/** The route and envelope of the scripted conversation. */
export const BASE = { provider: 'p', model: 'm', reasoningEffort: 'high', system: SYSTEM, tools: TOOLS } as const

export interface LedgerHarness extends TestContext {
  adapter: ScriptedAdapter
  /** The ledger's clock: set `clock.now` to move time. */
  clock: { now: number }
  /** What the provider reports for each call; default none. */
  usage: (request: GenerateOptions, index: number) => TokenUsage | undefined
  /** Replies of the scripted model; default a text answer. */
  reply: (request: GenerateOptions, index: number) => ScriptedReply | undefined
}

export interface LedgerHarnessOptions {
  ledger?: Partial<CacheLedger.Config>
  /** A JSONL file store in this folder instead of the in-memory store. */
  directory?: string
  models?: Record<string, ModelInfo>
}

/** Real runtime, session store and ledger; only the model's content is scripted. */
export async function mountLedger(options: LedgerHarnessOptions = {}): Promise<LedgerHarness> {
  const context = await createTestContext()
  const { ctx } = context
  const clock = { now: 1_000_000 }
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, options.directory ? { store: 'file', directory: options.directory } : {})
  ctx.plugin(CacheLedger, { now: () => clock.now, ...options.ledger })
  const harness: LedgerHarness = Object.assign(context, {
    adapter: undefined as unknown as ScriptedAdapter,
    clock,
    usage: () => undefined,
    reply: () => undefined,
  })
  harness.adapter = new ScriptedAdapter({
    models: options.models ?? { m: MODEL, other: MODEL },
    responses: (request, index) => {
      const reply = harness.reply(request, index)
      if (reply) return reply
      const usage = harness.usage(request, index)
      return usage ? { content: 'ok', usage } : { content: 'ok' }
    },
  })
  ctx.llm.registerAdapter('p', harness.adapter)
  return harness
}

/** Sends `request` to completion. */
export function send(harness: LedgerHarness, request: GenerateOptions): Promise<GenerateResult> {
  return harness.ctx.llm.generate(request)
}

/** The conversation request of `session` now: the base envelope with `overrides`, and the session's messages. */
export function conversationRequest(session: Session, overrides: Partial<GenerateOptions> = {}): GenerateOptions {
  return { ...BASE, ...overrides, messages: session.deriveMessages(), purpose: 'conversation', sessionId: session.id }
}

/**
 * One agent step by hand: sends the conversation request, then logs the model's tool call and
 * its result (`resultText`, default a numbered file) as the agent loop would.
 */
export async function step(
  harness: LedgerHarness,
  session: Session,
  overrides: Partial<GenerateOptions> = {},
  resultText?: string,
): Promise<void> {
  await send(harness, conversationRequest(session, overrides))
  const index = session.surface.nodes.length
  session.append(
    'assistant/message',
    {
      message: createAssistantMessage(
        [textBlock(`Reading file ${index}.`), toolCallBlock(`call-${index}`, 'read', `{"path":"src/${index}.ts"}`)],
        { provider: 'p', model: 'm' },
      ),
    },
    'append',
  )
  session.append(
    'tool/result',
    {
      message: createToolResultMessage(
        `call-${index}`,
        resultText ?? `export const value${index} = ${index} // ${'x'.repeat(400)}`,
      ),
      toolName: 'read',
    },
    'append',
  )
}

/** A new session of the harness's store with the task as its first message. */
export async function startSession(harness: LedgerHarness, id = 'session'): Promise<Session> {
  const session = await harness.ctx.sessions.create(id)
  session.append(
    'user/message',
    { message: createUserMessage('Refactor the loader. Read every file first.') },
    'append',
  )
  return session
}

/**
 * Appends an event the compaction packages declare, by its name: the ledger reads folds and
 * prunes by name (`compaction/summary`, `compaction/prune`, their `shadowedRange`), and does not
 * depend on `@warmfold/compaction`, so neither do its tests.
 */
function appendNamed(session: Session, type: string, data: Record<string, unknown>): void {
  ;(session.append as (type: string, data: Record<string, unknown>) => void)(type, data)
}

/** Folds surface positions `start..end` into a checkpoint, logged as the compaction engine logs it. */
export function logFold(
  session: Session,
  start: number,
  end: number,
  summary = 'Goal: refactor the loader. Read so far: src/1.ts onwards.',
): void {
  const compactionId = `fold-${session.length}`
  const shadowedSeqs = session.surface.nodes.slice(start, end + 1)
  appendNamed(session, 'compaction/start', { compactionId, turn: null, trigger: 'manual' })
  session.unit(() => {
    appendNamed(session, 'compaction/summary', {
      compactionId,
      summary: [textBlock(summary)],
      shadowedRange: { start, end },
      shadowedSeqs: [...shadowedSeqs],
      shadowedTokenCount: 1000,
      provider: 'p',
      model: 'm',
    })
    // The ledger reads the checkpoint as the user message it is; its source is the engine's business.
    const checkpoint = createUserMessage(`<summary>${summary}</summary>`)
    session.append(
      'user/message',
      { message: checkpoint },
      { op: 'replace', start, end, sourceEventSeqs: [...shadowedSeqs] },
    )
  })
  appendNamed(session, 'compaction/end', { compactionId, turn: null })
}

/** Rewrites the tool result at surface `position`, logged as the pruner logs it. */
export function logPrune(session: Session, position: number): void {
  const seq = session.surface.nodes[position] as number
  const original = session.deriveMessages()[position] as Message
  const block = original.content[0]
  if (block?.type !== 'tool-result') throw new Error(`position ${position} holds no tool result`)
  session.unit(() => {
    appendNamed(session, 'compaction/prune', {
      shadowedRange: { start: position, end: position },
      shadowedSeqs: [seq],
      shadowedTokenCount: 100,
    })
    session.append(
      'tool/result',
      { message: createToolResultMessage(block.toolCallId, '[pruned]') },
      { op: 'replace', start: position, end: position, sourceEventSeqs: [seq] },
    )
  })
}

/** The `cache/observation` data logged to `session`, in order. */
export function observations(session: Session): CacheObservationData[] {
  return session.events
    .filter((event) => event.type === 'cache/observation')
    .map((event) => event.data as CacheObservationData)
}

/** The `cache/guard` data logged to `session`, in order. */
export function guards(session: Session): CacheGuardData[] {
  return session.events.filter((event) => event.type === 'cache/guard').map((event) => event.data as CacheGuardData)
}

/** Fails on any recorded cordis warning or error, and always stops the context. */
export async function finish(harness: LedgerHarness): Promise<void> {
  try {
    harness.assertClean()
  } finally {
    await harness.dispose()
  }
}
