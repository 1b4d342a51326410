import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Context } from '@cordisjs/core'
import { AgentLoop, ToolRegistry } from '@warmfold/agent-loop'
import type { EngineClock } from '@warmfold/compaction-basic'
import { BasicCompactionEngine, COMPACTION_INSTRUCTION, REAL_TIME_CLOCK } from '@warmfold/compaction-basic'
import { LlmRuntime } from '@warmfold/llm'
import { OpenAICompatibleAdapter } from '@warmfold/llm-openai-compatible'
import type { AnySessionEvent } from '@warmfold/session'
import { SessionStore } from '@warmfold/session'
import type { RecordedRequest, Reply } from '@warmfold/test-utils'
import { RecordingServer } from '@warmfold/test-utils'
import { TokenMeter } from '@warmfold/token-meter'
import { deepseekStream, deepseekUsage } from '../../../../llm/llm-openai-compatible/test/provider-streams.ts'

/** The model of the stalling host: a DeepSeek-dialect route with an 8,000-token window. */
export const MODEL = 'deepseek-v4-flash'
export const SESSION_ID = 'stalling'

/** A summary request: its last message is the engine's instruction. */
export function isSummaryRequest(request: RecordedRequest): boolean {
  const last = request.json?.messages?.at(-1)
  return last?.role === 'user' && last.content === COMPACTION_INSTRUCTION
}

/** Deterministic filler without long repeated runs. */
export function filler(seed: number, length: number): string {
  let text = ''
  let state = (seed + 1) * 2654435761
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2147483648
    text += `${state.toString(36)} `
  }
  return text.slice(0, length)
}

/** How the conversation requests of a {@link StallingServer} are answered. */
export type ConversationMode =
  /** A tool call every step (the turn runs on, to the pressure threshold). */
  | 'tools'
  /** A tool call every step until a summary request has arrived, then a final answer (the turn ends, a fold is in flight). */
  | 'until-summary'

/**
 * A real HTTP server on 127.0.0.1 speaking the DeepSeek dialect of chat completions: summary
 * requests never answer (the provider stalls; the connection stays open until the client gives
 * up), conversation requests are answered at once with a `read` tool call (or, in mode
 * `until-summary`, a final answer once a summary request has arrived).
 */
export class StallingServer {
  private constructor(
    readonly server: RecordingServer,
    private readonly state: { mode: ConversationMode },
  ) {}

  /** How conversation requests are answered from now on. */
  set mode(mode: ConversationMode) {
    this.state.mode = mode
  }

  static async start(mode: ConversationMode = 'tools'): Promise<StallingServer> {
    const state = { mode }
    let step = 0
    let server: RecordingServer | undefined
    const recording = await RecordingServer.start((request): Reply => {
      if (isSummaryRequest(request)) return { hang: true }
      const usage = deepseekUsage(0, Math.ceil(request.body.length / 4), 20, 0)
      const summarySeen = (server as RecordingServer).requests.some(isSummaryRequest)
      if (state.mode === 'until-summary' && summarySeen)
        return { sse: deepseekStream(MODEL, { text: 'Done for now.' }, usage) }
      const id = step++
      return {
        sse: deepseekStream(
          MODEL,
          {
            text: `Reading file ${id}.`,
            toolCalls: [{ id: `call_${id}`, name: 'read', arguments: `{"path": "src/file-${id}.ts"}` }],
          },
          usage,
        ),
      }
    })
    server = recording
    return new StallingServer(recording, state)
  }

  get baseURL(): string {
    return this.server.baseURL
  }

  /** Index of the first summary request that arrived, or -1. */
  summaryIndex(): number {
    return this.server.requests.findIndex(isSummaryRequest)
  }

  /** Summary requests that arrived. */
  summaries(): RecordedRequest[] {
    return this.server.where(isSummaryRequest)
  }

  close(): Promise<void> {
    return this.server.close()
  }
}

/** What {@link mountStallingHost} mounts: where the session log goes and the engine's background settings. */
export interface StallingHostOptions {
  readonly baseURL: string
  /** The JSONL store's folder. */
  readonly directory: string
  /** `background.maxWaitMs` (default: the engine's, 300 s). */
  readonly maxWaitMs?: number
}

/**
 * Real time, recording the delay of every timer the engine arms: the engine waits at the
 * pressure threshold through a timer of exactly `background.maxWaitMs`, so a test sees a turn
 * block there without watching the clock.
 */
export class RecordingClock implements EngineClock {
  /** The delays of the timers armed so far, in order. */
  readonly timers: number[] = []

  now(): number {
    return REAL_TIME_CLOCK.now()
  }

  setTimeout(callback: () => Promise<void>, delayMs: number): () => void {
    this.timers.push(delayMs)
    return REAL_TIME_CLOCK.setTimeout(callback, delayMs)
  }
}

/** The engine's default `background.maxWaitMs`. */
export const DEFAULT_MAX_WAIT_MS = 300_000

/**
 * The real runtime, JSONL store, loop, tools, meter and engine (background folds from half the
 * pressure threshold, no idle folds), the OpenAI-compatible adapter pointed at `baseURL`, and a
 * `read` tool that returns 1,200 characters. The engine is mounted in a fork of its own, so a
 * test can unload it alone; returns that fork.
 */
export function mountStallingHost(
  ctx: Context,
  options: StallingHostOptions,
): { engine: { dispose(): unknown }; clock: RecordingClock } {
  const clock = new RecordingClock()
  ctx.plugin(LlmRuntime)
  ctx.plugin(SessionStore, { store: 'file', directory: options.directory })
  ctx.plugin(ToolRegistry)
  ctx.plugin(AgentLoop)
  ctx.plugin(TokenMeter, {})
  const engine = ctx.plugin(BasicCompactionEngine, {
    clock,
    idle: { enabled: false },
    background: {
      startRatio: 0.5,
      ...(options.maxWaitMs === undefined ? {} : { maxWaitMs: options.maxWaitMs }),
    },
  })
  ctx.plugin(OpenAICompatibleAdapter, {
    provider: 'deepseek',
    baseURL: options.baseURL,
    apiKey: 'sk-test-stalling',
    dialect: 'deepseek',
    models: { [MODEL]: { contextWindow: 8000, defaultMaxTokens: 500, efforts: ['off'], defaultEffort: 'off' } },
    retryBaseMs: 1,
    maxRetries: 0,
  })
  let read = 0
  ctx.plugin({
    name: 'stalling-host-tools',
    apply: (inner: Context) => {
      inner.on('ready', () => {
        inner.tools.register({
          name: 'read',
          description: 'Read a file',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          execute: () => filler(1000 + read++, 1200),
        })
      })
    },
    inject: ['tools'],
  })
  return { engine, clock }
}

/** The agent options of the stalling host's session. */
export const AGENT_OPTIONS = { provider: 'deepseek', model: MODEL, system: 'You are a coding agent.' } as const

/** The events of `SESSION_ID` as its JSONL file on disk holds them (blank and torn lines skipped). */
export function eventsOnDisk(directory: string, id = SESSION_ID): AnySessionEvent[] {
  const text = readFileSync(join(directory, `${id}.jsonl`), 'utf8')
  const events: AnySessionEvent[] = []
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    try {
      events.push(JSON.parse(line) as AnySessionEvent)
    } catch {
      // A torn last line: not an event.
    }
  }
  return events
}

/** Background fold brackets of `events`: each start with its end, if it has one. */
export function foldBrackets(events: readonly AnySessionEvent[]): Array<{
  compactionId: string
  trigger: string
  end?: { error?: string; discarded?: { reason: string; detail: string } }
}> {
  const brackets = events
    .filter((event) => event.type === 'compaction/start')
    .map((event) => ({ ...(event.data as { compactionId: string; trigger: string }) }))
  return brackets.map((bracket) => {
    const end = events.find(
      (event) =>
        event.type === 'compaction/end' &&
        (event.data as { compactionId: string }).compactionId === bracket.compactionId,
    )
    return end
      ? { ...bracket, end: end.data as { error?: string; discarded?: { reason: string; detail: string } } }
      : bracket
  })
}
