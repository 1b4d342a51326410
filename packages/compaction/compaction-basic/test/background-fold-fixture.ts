import { isCheckpointMessage } from '@warmfold/compaction'
import type { GenerateOptions, Message } from '@warmfold/llm'
import type { ScriptedReply } from '@warmfold/llm/testing'
import type { AnySessionEvent, Session, SessionEvent } from '@warmfold/session'

export type CompactionEndData = SessionEvent<'compaction/end'>['data']
import { expect } from 'vitest'
import type { BackgroundFoldConfig, BasicCompactionConfig, BasicCompactionEngine } from '../src/index.ts'
import type { EngineHarness, EngineHarnessOptions } from './engine-fixture.ts'
import { mountEngine, oneToolStepPerTurn, ROUTE, SUMMARY } from './engine-fixture.ts'
import { ManualIdleClock } from './manual-idle-clock.ts'

/** The pressure threshold H of the fixture's `main` model: window 8000 × 0.8. */
export const THRESHOLD = 6400

/** One summary call the test holds: it answers only when released (or fails when its signal aborts). */
export interface HeldCall {
  readonly request: GenerateOptions
  release(reply?: ScriptedReply): void
}

/**
 * The summary calls of a host: answered at once with {@link SUMMARY}, or, while `hold` is set,
 * the calls of background and idle folds are held until the test releases them (a slow summary
 * beside the conversation); a fold on the turn's path is answered at once.
 */
export class SummaryCalls {
  hold = false
  /** Replies for the next calls, in order, before the default (e.g. an error). */
  readonly next: ScriptedReply[] = []
  readonly held: HeldCall[] = []
  /** The trigger of the fold a summary call belongs to (set by the host). */
  triggerOf: (request: GenerateOptions) => string | undefined = () => undefined

  reply = (request: GenerateOptions): ScriptedReply | Promise<ScriptedReply> => {
    const scripted = this.next.shift()
    const trigger = this.triggerOf(request)
    if (!this.hold || (trigger !== 'background' && trigger !== 'idle')) return scripted ?? { content: SUMMARY }
    return new Promise<ScriptedReply>((resolve) => {
      this.held.push({ request, release: (reply) => resolve(reply ?? scripted ?? { content: SUMMARY }) })
    })
  }
}

/** What one background-fold host records: the conversation requests with the request size the meter measured then, and where folds started. */
export type TimelineEntry =
  | { readonly kind: 'request'; readonly totalTokens: number; readonly request: GenerateOptions }
  | { readonly kind: 'start'; readonly seq: number; readonly trigger: string }

export interface BackgroundHost {
  readonly harness: EngineHarness
  readonly engine: BasicCompactionEngine
  readonly clock: ManualIdleClock
  readonly summaries: SummaryCalls
  readonly timeline: TimelineEntry[]
  /** Characters of the next tool results (one entry per result, then the default 1200). */
  readonly results: number[]
}

export interface BackgroundHostOptions extends Omit<EngineHarnessOptions, 'engine' | 'summary' | 'resultChars'> {
  background?: BackgroundFoldConfig
  /** More engine config (default `maxTokens` 1000, so a summary call can replay the whole last request in the fixture's 8000-token window). */
  engine?: Omit<BasicCompactionConfig, 'background' | 'clock' | 'idle'>
}

/**
 * A real host (runtime, store, loop, tools, meter, invariants, engine) with background folds at
 * a fixed soft threshold (default `startRatio` 0.8: S = 5120), no idle folds, and a manual
 * engine clock: the engine's waits at the threshold time out only when the test advances it.
 */
export async function backgroundHost(options: BackgroundHostOptions = {}): Promise<BackgroundHost> {
  const clock = new ManualIdleClock()
  const summaries = new SummaryCalls()
  const results: number[] = []
  const { background, engine, ...rest } = options
  const harness = await mountEngine({
    conversation: oneToolStepPerTurn,
    ...rest,
    summary: summaries.reply,
    resultChars: () => results.shift() ?? 1200,
    engine: {
      maxTokens: 1000,
      ...engine,
      clock,
      idle: { enabled: false },
      background: { startRatio: 0.8, ...background },
    },
  })
  const timeline: TimelineEntry[] = []
  const sessions = new Map<string, Session>()
  summaries.triggerOf = (request) => {
    const start =
      request.sessionId === undefined
        ? undefined
        : sessions.get(request.sessionId)?.events.findLast((event) => event.type === 'compaction/start')
    return (start?.data as { trigger?: string } | undefined)?.trigger
  }
  harness.ctx.on('llm/stream', (request) => {
    const session =
      request.purpose === 'conversation' && request.sessionId !== undefined
        ? sessions.get(request.sessionId)
        : undefined
    if (session)
      timeline.push({ kind: 'request', totalTokens: harness.ctx.tokenMeter.measure(session).totalTokens, request })
  })
  harness.ctx.on('session/event', (session: Session, event: AnySessionEvent) => {
    sessions.set(session.id, session)
    if (event.type === 'compaction/start')
      timeline.push({ kind: 'start', seq: event.seq, trigger: (event.data as { trigger: string }).trigger })
  })
  return { harness, engine: harness.ctx.compaction as BasicCompactionEngine, clock, summaries, timeline, results }
}

/** An agent of `host` on session `id` with the fixture's route. */
export function agentOf(host: BackgroundHost, id = 'background') {
  return host.harness.ctx.agentLoop.create(id, { ...ROUTE, system: 'You are a coding agent.' })
}

/** Polls (yielding to timers and I/O) until `condition` holds; fails naming `what` after `limit` polls. */
export async function until(condition: () => boolean, what: string, limit = 5000): Promise<void> {
  for (let poll = 0; !condition(); poll++) {
    if (poll >= limit) throw new Error(`until: ${what} did not happen after ${limit} polls`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

type Agent = Awaited<ReturnType<typeof agentOf>>

/**
 * Runs one-step turns until `condition` holds after a turn, or until the turn blocks at the
 * threshold on a fold in flight (the engine's wait timer is pending on the manual clock).
 * @returns `'blocked'` when a turn is waiting, `'done'` when `condition` holds.
 */
export async function turnsUntil(
  host: BackgroundHost,
  agent: Agent,
  condition: () => boolean,
  limit = 60,
): Promise<'blocked' | 'done'> {
  for (let turn = 0; !condition(); turn++) {
    if (turn >= limit) throw new Error(`turnsUntil: condition not reached after ${limit} turns`)
    agent.followup(`Continue (${turn}).`)
    let idle = false
    void agent.whenIdle().then(() => (idle = true))
    await until(() => idle || host.clock.pending().length > 0, 'the turn ending or blocking')
    if (!idle) return 'blocked'
  }
  return 'done'
}

/** The request size (meter) of the last conversation request. */
export function totalTokens(host: BackgroundHost, session: Session): number {
  return host.harness.ctx.tokenMeter.measure(session).totalTokens
}

export function endsOf(session: Session): CompactionEndData[] {
  return session.events
    .filter((event) => event.type === 'compaction/end')
    .map((event) => event.data as CompactionEndData)
}

export function startsOf(session: Session): Array<{ seq: number; trigger: string; compactionId: string }> {
  return session.events
    .filter((event) => event.type === 'compaction/start')
    .map((event) => ({ seq: event.seq, ...(event.data as { trigger: string; compactionId: string }) }))
}

/** Folds whose bracket is open now (a `compaction/start` without its `compaction/end`). */
export function openFolds(session: Session): number {
  const ended = new Set(endsOf(session).map((end) => end.compactionId))
  return startsOf(session).filter((start) => !ended.has(start.compactionId)).length
}

/** Every message appended to the session (not through a replace), with its seq, in order. */
export function appendedMessages(session: Session): Array<{ seq: number; message: Message }> {
  return session.events.flatMap((event) =>
    event.surface?.op === 'append' && (event.data as { message?: Message }).message
      ? [{ seq: event.seq, message: (event.data as { message: Message }).message }]
      : [],
  )
}

/** Seqs folded away by every committed checkpoint. */
export function shadowedSeqs(session: Session): Set<number> {
  return new Set(
    session.events
      .filter((event) => event.type === 'compaction/summary')
      .flatMap((event) => (event.data as { shadowedSeqs: number[] }).shadowedSeqs),
  )
}

/**
 * Nothing lost, duplicated or reordered: the session's messages without its checkpoints are
 * exactly the appended messages no checkpoint folded, in append order (carried pins included).
 */
export function expectEveryMessageKept(session: Session): void {
  const shadowed = shadowedSeqs(session)
  const expected = appendedMessages(session)
    .filter((entry) => !shadowed.has(entry.seq))
    .map((entry) => entry.message)
  expect(session.deriveMessages().filter((message) => !isCheckpointMessage(message))).toEqual(expected)
}

/** The conversation requests of `host`, in order. */
export function conversationRequests(host: BackgroundHost): GenerateOptions[] {
  return host.timeline.flatMap((entry) => (entry.kind === 'request' ? [entry.request] : []))
}

/**
 * The conversation request a summary call replays whole: the last one whose messages are the
 * summary call's messages before its instruction (a warm summary call reads all of its entry).
 */
export function replayedRequest(host: BackgroundHost, summary: GenerateOptions): GenerateOptions | undefined {
  const replayed = summary.messages.slice(0, -1)
  return conversationRequests(host).findLast(
    (request) =>
      request.messages.length === replayed.length &&
      request.messages.every((message, index) => JSON.stringify(message) === JSON.stringify(replayed[index])),
  )
}
